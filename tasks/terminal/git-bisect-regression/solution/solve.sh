#!/bin/bash
set -euo pipefail
cd /app/stats-lib
git bisect start main v1.0 >/dev/null
# status 2 = cannot import: tell bisect to skip that commit (125) instead of calling it bad
git bisect run sh -c 'python3 -B test_stats.py >/dev/null; rc=$?; [ $rc -eq 2 ] && exit 125; exit $rc' > /tmp/bisect.out
first=$(git rev-parse refs/bisect/bad)
git bisect reset -q main >/dev/null 2>&1 || git bisect reset main
echo "$first" > /app/first_bad_commit.txt
