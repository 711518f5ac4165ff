#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cp /tests/test_units.py /app/test_units.py
cd /app
if python3 -m pytest -q -p no:cacheprovider test_units.py; then echo 1 > /logs/verifier/reward.txt; fi
rm -f /app/test_units.py
exit 0
