#!/bin/bash
python3 - <<'EOF'
import csv, json
rows = list(csv.DictReader(open('/app/inventory.csv')))
json.dump({"total_qty": sum(int(r['qty']) for r in rows),
           "total_value": round(sum(int(r['qty']) * float(r['price']) for r in rows), 2)},
          open('/app/inventory.json', 'w'))
EOF
