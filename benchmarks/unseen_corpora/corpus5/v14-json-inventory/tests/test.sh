#!/bin/bash
export PATH=/usr/bin:/bin
mkdir -p /logs/verifier
cd /
/usr/bin/python3 -I -B /tests/check.py
exit $?
