#!/bin/bash
set -euo pipefail
python3 - /app/access.log > /app/latency.csv <<'PY'
import math, re, sys
from collections import defaultdict
data = defaultdict(list)
for line in open(sys.argv[1]):
    ts, method, path, status, lat = line.split()
    if lat == "-":
        continue
    ms = int(lat[:-2]) if lat.endswith("ms") else round(float(lat[:-1]) * 1000)
    path = path.split("?")[0]
    path = "/".join(":id" if seg.isdigit() else seg for seg in path.split("/"))
    data[f"{method} {path}"].append(ms)
rows = []
for ep, v in data.items():
    v.sort()
    n = len(v)
    rank = lambda p: v[max(1, math.ceil(p / 100 * n)) - 1]
    rows.append((ep, n, rank(50), rank(95), v[-1]))
rows.sort(key=lambda r: (-r[1], r[0]))
print("endpoint,count,p50,p95,max")
for r in rows:
    print(",".join(map(str, r)))
PY
