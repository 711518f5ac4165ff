import sqlite3, sys
try:
    c = sqlite3.connect('file:/app/shop.db?mode=ro', uri=True)
    rows = c.execute('SELECT id, name, email FROM customers ORDER BY id').fetchall()
    idx = c.execute("SELECT name FROM pragma_index_list('customers') WHERE name='idx_customers_email' AND \"unique\"=1").fetchall()
    cols = [r[0] for r in c.execute("SELECT name FROM pragma_index_info('idx_customers_email')")]
except sqlite3.Error:
    sys.exit(1)
ok = rows == [(1, 'Ann', 'ann@example.com'), (2, 'Raj', 'raj@example.com'), (3, 'Lee', 'lee@example.net')]
ok = ok and len(idx) == 1 and cols == ['email']
log = open('/app/migrations.log').read().splitlines() if ok else []
ok = ok and log == ['migration 001 applied', 'migration 002 applied']
sys.exit(0 if ok else 1)
