#!/bin/bash
python3 - <<'EOF'
import csv, datetime as dt
asof = dt.date.fromisoformat(open('/app/asof.txt').read().strip())
rows = []
for r in csv.DictReader(open('/app/invoices.csv')):
    due = dt.date.fromisoformat(r['issued']) + dt.timedelta(days=int(r['terms_days']))
    if r['paid'] == 'no' and due < asof:
        rows.append((due, r['id']))
open('/app/overdue.txt', 'w').write(''.join(i + '\n' for _, i in sorted(rows)))
EOF
