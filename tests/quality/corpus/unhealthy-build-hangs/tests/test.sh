#!/bin/bash
# a RUN step never finishes (build_timeout_sec = 3)
mkdir -p /logs/verifier
if [ "$(cat /app/total.txt 2>/dev/null)" = "15" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
