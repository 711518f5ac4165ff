#!/bin/bash
# test.sh depends on the iteration order of a Python set (hash seeds vary)
mkdir -p /logs/verifier
first=$(python3 -c "print(next(iter({'alpha', 'beta'})))")
if [ "$first" = "alpha" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
