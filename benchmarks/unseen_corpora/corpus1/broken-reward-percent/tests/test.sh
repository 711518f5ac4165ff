#!/bin/bash
# reward = percent of checks passed (0, 50 or 100)
mkdir -p /logs/verifier
score=0
[ "$(cat /app/total.txt 2>/dev/null)" = 15 ] && score=$((score + 50))
[ "$(cat /app/count.txt 2>/dev/null)" = 3 ] && score=$((score + 50))
echo $score > /logs/verifier/reward.txt
