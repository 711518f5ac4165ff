#!/bin/bash
mkdir -p /logs/verifier
printf 'region,amount\neast,17\nwest,5\n' | cmp -s - /app/by_region.csv
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
