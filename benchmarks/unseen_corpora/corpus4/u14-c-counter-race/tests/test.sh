#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
src=/app/counter.c
if grep -q 'pthread_mutex_lock' "$src" && grep -q 'pthread_mutex_unlock' "$src" \
   && /usr/bin/gcc -O2 -pthread -o /tmp/counter_check "$src" 2>/tmp/gcc.log; then
  reward 1
else
  reward 0
fi
exit 0
