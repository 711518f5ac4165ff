#!/bin/bash
# a sound pytest verifier in a system-mode image (its /usr is writable): the reward needs
# pytest's report that every test ran and passed, since the module under test runs in-process
mkdir -p /logs/verifier
cd /app
report="$(mktemp -d)/junit.xml"
python3 -P -m pytest -q -p no:cacheprovider --junitxml="$report" /tests/test_greet.py
status=$?
if [ $status -eq 0 ] && python3 -P -c '
import sys, xml.etree.ElementTree as ET
suites = list(ET.parse(sys.argv[1]).getroot().iter("testsuite"))
sys.exit(0 if suites and all(int(s.get("tests", 0)) > 0 and int(s.get("failures", 0)) + int(s.get("errors", 0))
                             + int(s.get("skipped", 0)) == 0 for s in suites) else 1)
' "$report" 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
