#!/bin/bash
set -euo pipefail
cd /app/scripts
# 1. Windows line endings in the script itself ($'\r': command not found)
sed -i 's/\r$//' setup.sh
# 2. it uses bash features (arrays, [[ ]]), so it needs bash, not sh
sed -i '1s|^#!/bin/sh$|#!/bin/bash|' setup.sh
# 3. the data file may have CRLF endings too: strip the CR of each line while reading
python3 - <<'PY'
p = "/app/scripts/setup.sh"
s = open(p).read()
s = s.replace('''while read -r name port replicas; do
''', '''while read -r name port replicas; do
    name=${name%$'\\r'}; port=${port%$'\\r'}; replicas=${replicas%$'\\r'}
''')
open(p, "w").write(s)
PY
# 4. not executable
chmod 755 setup.sh
/app/scripts/setup.sh
