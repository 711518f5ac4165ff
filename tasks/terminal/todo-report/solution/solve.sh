#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import os, re
root = "/app/src"
pat = re.compile(r"(?<![A-Za-z0-9_])(TODO|FIXME):(.*)$")
rows = []
for d, dirs, files in os.walk(root):
    rel_d = os.path.relpath(d, root)
    if rel_d == "vendor" or rel_d.startswith("vendor/"):
        continue
    for f in files:
        if not f.endswith((".py", ".c", ".h", ".js")):
            continue
        rel = os.path.normpath(os.path.join(rel_d, f))
        with open(os.path.join(d, f)) as fh:
            for n, line in enumerate(fh, 1):
                m = pat.search(line.rstrip("\n"))
                if m:
                    text = m.group(2)
                    text = text.rstrip(" \t")
                    if text.endswith("*/"):
                        text = text[:-2]
                    rows.append((rel.encode(), n, m.group(1), text.strip(" \t")))
rows.sort(key=lambda r: (r[0], r[1]))
with open("/app/todo.tsv", "w") as out:
    out.write("file\tline\ttag\ttext\n")
    for rel, n, tag, text in rows:
        out.write(f"{rel.decode()}\t{n}\t{tag}\t{text}\n")
PY
