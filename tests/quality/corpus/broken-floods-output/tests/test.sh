#!/bin/bash
# test.sh prints gigabytes and writes no reward
mkdir -p /logs/verifier
yes 'progress: still checking everything very thoroughly' | head -c 300000000
exit 0
