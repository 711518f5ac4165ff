#!/bin/bash
mkdir -p /logs/verifier
[ "$(cat /app/count.txt 2>/dev/null)" = 300000000 ]
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
