#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
if [ "$(tr -d '[:space:]' < /app/pin.txt 2>/dev/null)" = 730941 ]; then echo 1 > /logs/verifier/reward.txt; fi
exit 0
