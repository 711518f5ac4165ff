#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
if grep -q 'listen 8080;' /app/site.conf && grep -q 'server_name shop.internal' /app/site.conf; then
    echo 1 > /logs/verifier/reward.txt
fi
exit 0
