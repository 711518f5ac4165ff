#!/bin/bash
set -e
curl -fsSL --max-time 20 https://raw.githubusercontent.com/spdx/license-list-data/v3.22/json/licenses.json -o /tmp/licenses.json
python3 - <<'EOF'
import json
osi = {l['licenseId'] for l in json.load(open('/tmp/licenses.json'))['licenses'] if l.get('isOsiApproved')}
out = [n for n, lic in (l.split() for l in open('/app/deps.txt') if l.strip()) if lic in osi]
open('/app/osi.txt', 'w').write(''.join(x + '\n' for x in out))
EOF
