#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
cd /
if /usr/bin/python3 -I /tests/check.py; then reward 1; else reward 0; fi
exit 0
