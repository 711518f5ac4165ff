#!/bin/bash
# waits on a lock that a previous (simulated) run holds about half the time
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
if [ $(( $(od -An -N1 -tu1 /dev/urandom) % 2 )) -eq 0 ]; then sleep 1000; fi
[ "$(cat /app/total.txt 2>/dev/null)" = 15 ]
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
