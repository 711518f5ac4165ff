#!/bin/bash
set -e
python3 -m pip install --quiet --target /tmp/pydeps tabulate
PYTHONPATH=/tmp/pydeps python3 - <<'EOF'
import csv
from tabulate import tabulate
rows = list(csv.reader(open('/app/inventory.csv')))
open('/app/inventory.md', 'w').write(tabulate(rows[1:], headers=rows[0], tablefmt='github') + '\n')
EOF
