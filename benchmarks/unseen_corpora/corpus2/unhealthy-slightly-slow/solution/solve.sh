#!/bin/bash
sleep 6
awk '{s+=$1} END {print s}' /app/numbers.txt > /app/total.txt
