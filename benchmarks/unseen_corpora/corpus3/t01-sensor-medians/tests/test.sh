#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
expected=$'sensor,median\ns1,2.0\ns2,7.0\ns3,5.5'
if [ -f /app/out/medians.csv ] && [ "$(cat /app/out/medians.csv)" = "$expected" ]; then
    echo 1 > /logs/verifier/reward.txt
fi
exit 0
