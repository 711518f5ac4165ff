#!/bin/bash
# the solution writes solve.py; the tests import solver
mkdir -p /logs/verifier
python3 -P -m pytest -q -p no:cacheprovider /tests/test_solver.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
