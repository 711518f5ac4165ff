#!/bin/bash
# a sound pytest verifier in a system-mode image (its /usr is writable)
mkdir -p /logs/verifier
cd /app
python3 -P -m pytest -q -p no:cacheprovider /tests/test_greet.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
