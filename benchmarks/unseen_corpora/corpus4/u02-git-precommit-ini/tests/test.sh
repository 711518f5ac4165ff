#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
cd /app/repo || exit 0
n=$(grep -c '^\[' config/services.ini)
if [ "$n" -ne 5 ]; then reward 0; exit 0; fi
if sh .git/hooks/pre-commit > /tmp/hook.log 2>&1; then reward 1; else reward 0; fi
exit 0
