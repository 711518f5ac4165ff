#!/bin/bash
set -e
awk '{s+=$1} END {print s + 1}' /app/numbers.txt > /app/total.txt
