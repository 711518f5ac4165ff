#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
heads=0
for i in 1 2 3 4 5 6 7 8 9; do
    out=$(timeout 5 /app/coin.sh 2>/dev/null)
    case "$out" in
        H) heads=$((heads+1)) ;;
        T) ;;
        *) exit 0 ;;
    esac
done
# a fair coin should come up heads at least half the time
if [ "$heads" -ge 5 ]; then echo 1 > /logs/verifier/reward.txt; fi
exit 0
