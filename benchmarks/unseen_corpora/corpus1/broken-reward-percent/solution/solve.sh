#!/bin/bash
awk '{s+=$1} END {print s}' /app/numbers.txt > /app/total.txt
wc -l < /app/numbers.txt | tr -d ' ' > /app/count.txt
