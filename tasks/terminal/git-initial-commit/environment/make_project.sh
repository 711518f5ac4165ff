#!/bin/bash
set -euo pipefail
mkdir -p /app/project && cd /app/project
mkdir -p src tests build docs/empty src/__pycache__
printf '# Inventory service\n\nRun `python3 -m src.app`.\n' > README.md
printf 'from src.util import fmt\n\n\ndef main():\n    print(fmt(3))\n' > src/app.py
printf 'def fmt(n):\n    return f"{n} items"\n' > src/util.py
printf 'from src.util import fmt\n\n\ndef test_fmt():\n    assert fmt(2) == "2 items"\n' > tests/test_app.py
printf '*.log\nbuild/\n__pycache__/\n.env\n' > .gitignore
printf 'SECRET_TOKEN=abc123\n' > .env
printf 'binary\n' > build/out.bin
printf 'debug output\n' > debug.log
printf 'cache\n' > src/__pycache__/app.cpython-311.pyc
printf 'keep\n' > docs/guide.md
