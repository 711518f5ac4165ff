#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /app
if timeout 20 bash /app/convert.sh && ls /app/out/*.csv > /dev/null 2>&1; then
    echo 1 > /logs/verifier/reward.txt
fi
exit 0
