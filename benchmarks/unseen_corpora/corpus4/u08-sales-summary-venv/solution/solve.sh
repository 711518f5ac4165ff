#!/bin/bash
python3 - <<'EOF'
import csv
from decimal import Decimal
rev = {}
for r in csv.DictReader(open('/app/sales.csv')):
    rev[r['region']] = rev.get(r['region'], Decimal(0)) + int(r['qty']) * Decimal(r['unit_price'])
with open('/app/summary.csv', 'w') as f:
    f.write('region,revenue\n')
    for k, v in sorted(rev.items(), key=lambda kv: (-kv[1], kv[0])):
        f.write(f'{k},{v:.2f}\n')
EOF
