#!/bin/bash
set -euo pipefail
python3 - <<'PY'
p = "/app/intervals.py"
s = open(p).read()
s = s.replace('''def merge(intervals):
    merged = []
    for interval in intervals:
        if merged and interval[0] < merged[-1][1]:
            merged[-1][1] = interval[1]
        else:
            merged.append(interval)
    return merged''', '''def merge(intervals):
    for start, end in intervals:
        if start > end:
            raise ValueError(f"invalid interval [{start}, {end}]")
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged''')
s = s.replace('''    for line in sys.stdin:
        start, end = line.split("-")''', '''    for line in sys.stdin:
        if not line.strip():
            continue
        start, end = line.strip().split("-")''')
open(p, "w").write(s)
PY
