#!/bin/bash
cat > /app/convert.sh <<'EOF'
#!/bin/bash
set -e
mkdir -p /app/out
python3 - <<'PY'
import csv, glob, json, os
for path in sorted(glob.glob('/app/data/*.json')):
    name = os.path.splitext(os.path.basename(path))[0]
    with open(f'/app/out/{name}.csv', 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(['id', 'name', 'price'])
        for obj in json.load(open(path)):
            w.writerow([obj['id'], obj['name'], obj['price']])
PY
EOF
bash /app/convert.sh
