#!/bin/bash
# there is no solution/solve.sh
mkdir -p /logs/verifier
if [ "$(cat /app/total.txt 2>/dev/null)" = "15" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
