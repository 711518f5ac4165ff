#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
d=$(mktemp -d)
/usr/bin/gcc -O1 -o "$d/wc" /app/wc.c 2>/dev/null || exit 0
out=$(cd "$d" && timeout 5 ./wc < /tests/input.txt)
[ "$out" = 9 ] && echo 1 > /logs/verifier/reward.txt
exit 0
