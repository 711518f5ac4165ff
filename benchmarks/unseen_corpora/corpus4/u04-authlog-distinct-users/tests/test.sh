#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
got=$(head -c 64 /app/answer.txt 2>/dev/null | tr -d '\n')
want=$(grep -o 'Accepted [a-z]* for [A-Za-z0-9_]*' /tests/auth.log | awk '{print $4}' | sort -u | wc -l)
if [ -n "$got" ] && (( $got == $want )) 2>/dev/null; then reward 1; else reward 0; fi
exit 0
