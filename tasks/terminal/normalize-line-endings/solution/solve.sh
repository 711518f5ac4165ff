#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import os, re
for d, _, files in os.walk("/app/docs"):
    for f in files:
        if not f.endswith((".md", ".txt")):
            continue
        p = os.path.join(d, f)
        data = open(p, "rb").read()
        lines = re.split(rb"\r\n|\r|\n", data)
        lines = [l.rstrip(b" \t") for l in lines]
        while lines and lines[-1] == b"":
            lines.pop()
        out = b"\n".join(lines) + b"\n" if lines else b""
        open(p, "wb").write(out)
PY
