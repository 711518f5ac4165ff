#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import json
import os
import re

values = json.load(open("/app/config/values.json"))
out = []
for line in open("/app/config/.env.template").read().splitlines():
    if not line.strip() or line.startswith("#"):
        out.append(line)
        continue
    key, default = line.split("=", 1)
    value = values.get(key, default)
    if value and not re.fullmatch(r"[A-Za-z0-9_./:@-]+", value):
        value = '"' + re.sub(r'([\\"$`])', r"\\\1", value) + '"'
    out.append(f"{key}={value}")
fd = os.open("/app/config/.env", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "w") as fh:
    fh.write("\n".join(out) + "\n")
os.chmod("/app/config/.env", 0o600)
PY
