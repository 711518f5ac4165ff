import sqlite3, sys
try:
    rows = sorted(sqlite3.connect('file:/app/shop.db?mode=ro', uri=True).execute('SELECT name, price FROM items').fetchall())
except Exception:
    sys.exit(1)
sys.exit(0 if rows == [('book', 12), ('lamp', 30), ('pen', 3)] else 1)
