#!/bin/bash
set -euo pipefail
python3 - <<'PY'
p = "/app/flatten.py"
s = open(p).read()
start = s.index("def flatten(")
end = s.index("def main(")
s = s[:start] + '''def flatten(obj, sep=".", prefix=None):
    if not isinstance(obj, (dict, list)):
        raise TypeError("top level must be a JSON object or array")
    out = {}
    _walk(obj, sep, prefix, out, top=True)
    return out


def _walk(value, sep, key, out, top=False):
    if isinstance(value, (dict, list)):
        if not value and not top:
            out[key] = value
            return
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            _walk(v, sep, str(k) if key is None else f"{key}{sep}{k}", out)
    else:
        out[key] = value


''' + s[end:]
open(p, "w").write(s)
PY
