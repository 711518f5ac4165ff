#!/bin/bash
grep -o 'Accepted [a-z]* for [A-Za-z0-9_]*' /app/auth.log | awk '{print $4}' | sort -u | wc -l > /app/answer.txt
