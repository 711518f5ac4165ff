#!/bin/bash
# exits with an error (unbound variable) before it writes any reward
set -euo pipefail
mkdir -p /logs/verifier
actual=$(cat /app/total.txt)
if [ "$actual" = "$EXPECTED_TOTAL" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
