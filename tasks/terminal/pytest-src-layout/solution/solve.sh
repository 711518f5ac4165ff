#!/bin/bash
set -euo pipefail
cd /app/textkit
# 1. make `import textkit` resolve to src/ when pytest runs (pytest >= 7)
python3 - <<'PY'
p = "pyproject.toml"
s = open(p).read()
s = s.replace('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n')
open(p, "w").write(s)
PY
# 2. slugify: strip accents, collapse runs, no dash left by the cut
python3 - <<'PY'
p = "src/textkit/slug.py"
s = open(p).read()
s = s.replace('''    text = text.lower()
    slug = re.sub(r"[^a-z0-9]", "-", text).strip("-")
    if max_length is not None:
        slug = slug[:max_length]
    return slug''', '''    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if max_length is not None:
        slug = slug[:max_length].rstrip("-")
    return slug''')
open(p, "w").write(s)
# 3. wrap: a line of exactly `width` characters fits; validate width
p = "src/textkit/wrap.py"
s = open(p).read()
s = s.replace('''    lines = []
    current = ""''', '''    if width < 1:
        raise ValueError("width must be >= 1")
    lines = []
    current = ""''')
s = s.replace("len(current) + 1 + len(word) >= width", "len(current) + 1 + len(word) > width")
open(p, "w").write(s)
PY
python3 -m pytest -q -p no:cacheprovider
