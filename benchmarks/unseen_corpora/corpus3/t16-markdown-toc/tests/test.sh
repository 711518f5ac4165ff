#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
export PYTHONPATH=/app
if python3 /tests/check_toc.py; then echo 1 > /logs/verifier/reward.txt; fi
exit 0
