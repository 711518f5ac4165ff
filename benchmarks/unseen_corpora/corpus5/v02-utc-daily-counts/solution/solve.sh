#!/bin/bash
cat > /app/daily.py <<'EOF'
import sys
from collections import Counter
from datetime import datetime, timezone
c = Counter()
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    ts = line.split()[0]
    if ts.endswith("Z"):
        ts = ts[:-1] + "+00:00"
    c[datetime.fromisoformat(ts).astimezone(timezone.utc).date().isoformat()] += 1
print("date,count")
for k in sorted(c):
    print(f"{k},{c[k]}")
EOF
