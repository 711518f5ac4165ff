#!/bin/bash
python3 - <<'EOF'
import csv, json
from decimal import Decimal
rows = list(csv.DictReader(open('/app/orders.csv')))
tot = {}
for r in rows:
    if r['status'] == 'paid':
        tot[r['customer']] = tot.get(r['customer'], Decimal(0)) + Decimal(r['amount'])
top = sorted(tot.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
json.dump({'paid_orders': sum(r['status'] == 'paid' for r in rows),
           'refunded_orders': sum(r['status'] == 'refunded' for r in rows),
           'top_customers': [{'customer': c, 'total': f'{v:.2f}'} for c, v in top]},
          open('/app/report.json', 'w'))
EOF
