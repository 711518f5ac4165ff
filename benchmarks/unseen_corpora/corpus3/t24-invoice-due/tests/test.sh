#!/bin/bash
main() {
    mkdir -p /logs/verifier
    echo 0 > /logs/verifier/reward.txt
    want=$'INV-2\nINV-5\nINV-4\nINV-1\nINV-7'
    if [ -f /app/overdue.txt ] && [ "$(cat /app/overdue.txt)" = "$want" ]; then r=1; else r=0; fi
    echo "$r" > /logs/verifier/reward.txt
    exit 0
}
main "$@"
