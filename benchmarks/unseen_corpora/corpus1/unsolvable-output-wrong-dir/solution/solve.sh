#!/bin/bash
mkdir -p /app/out
awk '{s+=$1} END {print s}' /app/numbers.txt > /app/out/total.txt
