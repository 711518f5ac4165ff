#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
cp /tests/test_hidden.py /app/tests/test_hidden.py
cd /app
if python3 -m pytest -q -p no:cacheprovider tests > /tmp/pytest.log 2>&1; then reward 1; else reward 0; fi
exit 0
