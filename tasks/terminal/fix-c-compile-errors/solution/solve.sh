#!/bin/bash
set -euo pipefail
cd /app/wc_lite
python3 - <<'PY'
p = "wc_lite.c"
s = open(p).read()
s = s.replace("#include <stdio.h>\n", "#include <stdio.h>\n#include <string.h>\n", 1)
s = s.replace("    int in_word = 0;\n    int prev;\n", "    int in_word = 0;\n")
s = s.replace("""        if (isspace(ch)) {
            if (in_word)
                c->words++;
            in_word = 0;
        } else {
            in_word = 1;
        }""", """        if (isspace(ch)) {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            c->words++;
        }""")
s = s.replace('printf("%d %d %d %s\\n"', 'printf("%ld %ld %ld %s\\n"')
s = s.replace("total.bytes += c.bytes\n", "total.bytes += c.bytes;\n")
open(p, "w").write(s)
PY
make
