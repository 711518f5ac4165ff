#!/bin/bash
set -euo pipefail
cd /app/stats-c
python3 - <<'PY'
p = "Makefile"
s = open(p).read()
s = s.replace(".PHONY: all\n", """build/test_stats: tests/test_stats.c src/stats.h build/libstats.a | build
\t$(CC) $(CFLAGS) -o $@ tests/test_stats.c build/libstats.a -lm

test: build/test_stats
\t./build/test_stats

clean:
\trm -rf build

.PHONY: all test clean
""")
open(p, "w").write(s)
PY
make test
