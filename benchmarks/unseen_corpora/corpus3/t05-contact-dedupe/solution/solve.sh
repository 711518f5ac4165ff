#!/bin/bash
python3 - <<'EOF'
import csv
seen = set(); rows = []
for r in csv.DictReader(open('/app/contacts.csv')):
    e = r['email'].strip().lower()
    if e not in seen:
        seen.add(e); rows.append((r['name'], e))
with open('/app/contacts_clean.csv', 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n'); w.writerow(['name', 'email']); w.writerows(rows)
EOF
