#!/bin/bash
python3 - <<'EOF'
import csv, sqlite3
db = sqlite3.connect('/app/shop.db')
db.execute('CREATE TABLE items(name TEXT, price INTEGER)')
db.executemany('INSERT INTO items VALUES (?, ?)', [(r['name'], int(r['price'])) for r in csv.DictReader(open('/app/items.csv'))])
db.commit()
EOF
