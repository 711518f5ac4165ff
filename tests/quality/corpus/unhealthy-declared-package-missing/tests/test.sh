#!/bin/bash
# the Dockerfile's pip install fails quietly (|| true), so a package it declares is not there
mkdir -p /logs/verifier
if [ "$(cat /app/total.txt 2>/dev/null)" = "15" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
