#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
b=/app/build/stats
if [ -f "$b" ] && [ -x "$b" ] && [ "$b" -nt /app/src/main.c ] && [ "$(head -c 4 "$b" | od -An -c | tr -d ' ')" = '177ELF' ]; then
  reward 1
else
  reward 0
fi
exit 0
