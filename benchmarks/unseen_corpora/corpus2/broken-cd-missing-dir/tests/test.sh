#!/bin/bash
mkdir -p /logs/verifier
cd /tests/cases 2>/dev/null
fail=0
for c in $(ls *.case 2>/dev/null); do bash "$c" || fail=1; done
[ $fail -eq 0 ]
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
