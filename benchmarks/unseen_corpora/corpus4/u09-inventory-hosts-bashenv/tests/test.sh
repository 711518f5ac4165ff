#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
want=$(cat <<'EOF'
10.0.0.9 web2
10.0.0.12 web1
10.0.0.33 cache1
10.0.0.100 db2
10.0.1.5 db1
10.0.2.1 web3
EOF
)
got=$(cat /app/hosts.generated 2>/dev/null)
if [ -n "$got" ] && [ "$got" = "$want" ]; then reward 1; else reward 0; fi
exit 0
