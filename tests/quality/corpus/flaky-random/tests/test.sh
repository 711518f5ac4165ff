#!/bin/bash
# test.sh passes or fails at random
mkdir -p /logs/verifier
if [ $((RANDOM % 2)) -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
