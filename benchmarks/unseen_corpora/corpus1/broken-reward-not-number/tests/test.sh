#!/bin/bash
# writes PASS/FAIL instead of a float
mkdir -p /logs/verifier
if [ "$(cat /app/total.txt 2>/dev/null)" = 15 ]; then echo PASS > /logs/verifier/reward.txt; else echo FAIL > /logs/verifier/reward.txt; fi
