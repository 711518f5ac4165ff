#!/bin/bash
cat > /app/wordfreq.py <<'EOF'
import re, sys
from collections import Counter
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
c = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
for w, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[: int(sys.argv[2])]:
    print(f"{w} {n}")
EOF
