#!/bin/bash
export PATH=/usr/bin:/bin
unset BASH_ENV ENV PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTEST_ADDOPTS PYTEST_PLUGINS
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
rm -f /logs/verifier/junit.xml
cd /tests
/usr/bin/timeout 60 /usr/bin/python3 -I -m pytest -q -c /tests/pytest.ini --rootdir=/tests /tests/test_report.py --junitxml=/logs/verifier/junit.xml > /logs/verifier/pytest.log 2>&1
if /usr/bin/python3 -I /tests/parse_junit.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit 0
