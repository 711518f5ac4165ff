#!/bin/bash
python3 - <<'EOF'
import json
port = next(l.split()[1].split('/')[0] for l in open('/app/ports.txt') if l.split()[0] == 'postgres')
flags = ','.join(sorted(f['name'] for f in json.load(open('/app/flags.json')) if f['enabled']))
out = []
for line in open('/app/app.env'):
    if line.startswith('DB_PORT='):
        line = f'DB_PORT={port}\n'
    elif line.startswith('LOG_LEVEL='):
        line = 'LOG_LEVEL=warn\n'
    out.append(line)
out.append(f'FEATURE_FLAGS={flags}\n')
open('/app/app.env', 'w').writelines(out)
EOF
