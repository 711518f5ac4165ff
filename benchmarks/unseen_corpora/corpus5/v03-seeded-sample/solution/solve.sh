#!/bin/bash
cat > /app/pick.py <<'EOF'
import random, sys
seed, k, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lines = open(path).read().splitlines()
if k > len(lines):
    print("error: not enough lines", file=sys.stderr)
    sys.exit(2)
for x in random.Random(seed).sample(lines, k):
    print(x)
EOF
