#!/bin/bash
python3 - <<'EOF'
import csv, statistics
vals = {}
for r in csv.DictReader(open('/app/readings.csv')):
    vals.setdefault(r['sensor'], []).append(float(r['value']))
with open('/app/medians.csv', 'w') as f:
    f.write('sensor,median\n')
    for s in sorted(vals):
        f.write(f'{s},{statistics.median(vals[s]):.1f}\n')
EOF
