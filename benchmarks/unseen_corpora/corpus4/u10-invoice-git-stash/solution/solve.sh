#!/bin/bash
cd /app/repo && mkdir -p out
python3 - <<'EOF'
import json
orders = json.load(open('orders.json'))
out = {}
for o in orders:
    sub = sum(i['qty'] * i['unit_cents'] for i in o['items'])
    pct = 10 if sub >= 10000 else 5 if sub >= 5000 else 0
    amt = sub - (sub * pct + 50) // 100
    if o['coupon'] == 'SAVE5':
        amt = max(0, amt - 500)
    tax = (amt * 8 + 50) // 100 if o['region'] == 'CA' else 0
    out[o['id']] = amt + tax
json.dump(out, open('out/totals.json', 'w'), indent=2, sort_keys=True)
EOF
