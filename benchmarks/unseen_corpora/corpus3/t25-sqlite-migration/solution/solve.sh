#!/bin/bash
python3 - <<'EOF'
import csv, sqlite3
c = sqlite3.connect('/app/shop.db')
c.execute('ALTER TABLE customers ADD COLUMN email TEXT')
for r in csv.DictReader(open('/app/emails.csv')):
    c.execute('UPDATE customers SET email = ? WHERE id = ?', (r['email'].lower(), int(r['id'])))
c.execute('CREATE UNIQUE INDEX idx_customers_email ON customers(email)')
c.commit()
EOF
echo 'migration 002 applied' >> /app/migrations.log
