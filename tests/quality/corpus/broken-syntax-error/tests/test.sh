#!/bin/bash
# test.sh does not parse
mkdir -p /logs/verifier
if [ "$(cat /app/total.txt)" = "15" ]; then
  echo 1 > /logs/verifier/reward.txt
