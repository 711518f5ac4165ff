#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
printf 'MCMXCIV\nMMXXIV\nIL\nMMMDCCCLXXXVIII\n' > /tmp/roman_expected.txt
if cmp -s /app/roman.txt /tmp/roman_expected.txt; then echo 1 > /logs/verifier/reward.txt; fi
exit 0
