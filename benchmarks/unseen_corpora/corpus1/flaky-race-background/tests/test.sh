#!/bin/bash
# two background jobs race to write the result file; the second one to finish wins
mkdir -p /logs/verifier
rm -f /tmp/result
( sleep 0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 10 )); [ "$(cat /app/total.txt 2>/dev/null)" = 15 ] && echo 1 > /tmp/result || echo 0 > /tmp/result ) &
( sleep 0.05; echo 0 > /tmp/result ) &
wait
cp /tmp/result /logs/verifier/reward.txt
