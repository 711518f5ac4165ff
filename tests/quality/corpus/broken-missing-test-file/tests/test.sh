#!/bin/bash
# test.sh runs a test file tests/ does not have
mkdir -p /logs/verifier
python3 -P -m pytest -q -p no:cacheprovider /tests/test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
