#!/bin/bash
python3 - <<'EOF'
import csv, json
teams = {}
for r in csv.DictReader(open('/app/people.csv')):
    teams.setdefault(r['team'], []).append(r['name'])
json.dump({k: sorted(v) for k, v in teams.items()}, open('/app/teams.json', 'w'))
EOF
