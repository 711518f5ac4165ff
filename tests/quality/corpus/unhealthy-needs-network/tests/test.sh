#!/bin/bash
# the solution downloads its input while allow_internet = false
mkdir -p /logs/verifier
if [ -s /app/rates.csv ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
