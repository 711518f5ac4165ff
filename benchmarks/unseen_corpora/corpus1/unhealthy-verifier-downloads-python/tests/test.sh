#!/bin/bash
# fetches the expected answer from the network at verification time (allow_internet = false)
mkdir -p /logs/verifier
python3 -P /tests/grade.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
