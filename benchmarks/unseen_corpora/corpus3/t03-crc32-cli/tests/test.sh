#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
if /usr/bin/python3 -I /tests/check.py; then echo 1 > /logs/verifier/reward.txt; fi
exit 0
