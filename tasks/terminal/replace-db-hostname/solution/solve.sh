#!/bin/bash
set -euo pipefail
find /app/etc -type f -name '*.conf' -print0 | while IFS= read -r -d '' f; do
    python3 - "$f" <<'PY'
import re, sys
path = sys.argv[1]
with open(path, newline="") as fh:
    lines = fh.read().splitlines(keepends=True)
pat = re.compile(r"(?<![A-Za-z0-9.-])old-db\.internal(?![A-Za-z0-9-]|\.[A-Za-z0-9-])")
out = [l if l.lstrip().startswith("#") else pat.sub("db.prod.internal", l) for l in lines]
with open(path, "w", newline="") as fh:
    fh.write("".join(out))
PY
done
