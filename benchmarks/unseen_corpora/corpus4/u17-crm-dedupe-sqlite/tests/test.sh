#!/bin/bash
export PATH=/usr/bin:/bin
unset BASH_ENV ENV PYTHONPATH PYTHONHOME PYTHONSTARTUP
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /
if /usr/bin/timeout 20 /usr/bin/python3 -I /tests/check.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit 0
