import os, shutil, sqlite3, sys, tempfile
src = "/app/crm.db"
if os.path.islink(src) or not os.path.isfile(src):
    sys.exit(1)
tmp = tempfile.mkdtemp()
shutil.copy(src, tmp + "/crm.db")
try:
    db = sqlite3.connect("file:" + tmp + "/crm.db?mode=ro", uri=True)
    kinds = dict(db.execute("SELECT name, type FROM sqlite_master WHERE name IN ('customers','orders')").fetchall())
    if kinds != {"customers": "table", "orders": "table"}:
        sys.exit(1)
    cust = db.execute("SELECT id, email FROM customers ORDER BY id").fetchall()
    orders = db.execute("SELECT id, customer_id, amount_cents FROM orders ORDER BY id").fetchall()
    ver = db.execute("PRAGMA user_version").fetchone()[0]
except Exception:
    sys.exit(1)
ok = cust == [(1, 'ann@example.com'), (3, 'bo@example.org'), (4, 'cat@example.net'), (6, 'dan@example.com')] and orders == [(10, 1, 500), (11, 1, 700), (12, 3, 100), (13, 3, 250), (14, 4, 999), (15, 4, 1), (16, 6, 42), (17, 1, 8)] and ver == 2
sys.exit(0 if ok else 1)
