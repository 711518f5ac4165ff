#!/bin/bash
set -e
awk '{s+=$1} END {print s}' /app/numbers.txt > /app/total.txt
