#!/bin/bash
python3 - <<'PY'
p = "/app/wordfreq.py"
s = open(p).read()
s = s.replace('''import sys
from collections import Counter''', '''import re
import sys
from collections import Counter''')
s = s.replace('''    return text.split()''', '''    out = []
    for word in re.findall(r"[a-z0-9']+", text.lower()):
        word = word.strip("'")
        if word:
            out.append(word)
    return out''')
s = s.replace('''key=lambda kv: (kv[1], kv[0]), reverse=True)''', '''key=lambda kv: (-kv[1], kv[0]))''')
s = s.replace('''    with open(path) as fh:''', '''    with open(path, encoding="utf-8") as fh:''')
open(p, "w").write(s)
PY
