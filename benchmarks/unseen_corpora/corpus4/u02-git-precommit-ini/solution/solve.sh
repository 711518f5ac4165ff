#!/bin/bash
cd /app/repo
python3 - <<'EOF'
import re
p = 'config/services.ini'
s = open(p).read()
s = s.replace('port = 80a', 'port = 8081')
s = re.sub(r'(\[search\]\nhost = 10.0.0.4\nport = )8080', r'\g<1>8082', s)
open(p, 'w').write(s)
EOF
git add config/services.ini
git -c user.name=dev -c user.email=dev@example.com commit -q -m 'fix service ports'
