#!/bin/bash
mkdir -p /logs/verifier
out=$(cd / && timeout 5 /usr/bin/awk -f /app/maxcol.awk /tests/in.txt 2>/dev/null)
if [ "$out" = 17 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
