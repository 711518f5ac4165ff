#!/bin/bash
# Verifier: runs the hidden checks and always writes a reward (1 pass, 0 fail).
# The reward needs pytest's own report that every test ran and passed, not only its exit
# status: the agent's code runs inside the test process and could end it early with status 0.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /app 2>/dev/null || cd /
report="$(mktemp -d)/junit.xml"
timeout 50 python3 -P -m pytest -q -p no:cacheprovider -rA --junitxml="$report" /tests/test_outputs.py
status=$?
if [ $status -eq 0 ] && python3 -P -c '
import sys, xml.etree.ElementTree as ET
suites = ET.parse(sys.argv[1]).getroot().iter("testsuite")
counts = [(int(s.get("tests", 0)), sum(int(s.get(k, 0)) for k in ("failures", "errors", "skipped"))) for s in suites]
sys.exit(0 if counts and all(n > 0 and bad == 0 for n, bad in counts) else 1)
' "$report" 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
