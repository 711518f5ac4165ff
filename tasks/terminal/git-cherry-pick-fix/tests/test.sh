#!/bin/bash
# Verifier: runs the hidden checks and always writes a reward (1 pass, 0 fail).
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /app 2>/dev/null || cd /
timeout 50 python3 -P -m pytest -q -p no:cacheprovider -rA /tests/test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit 0
