import random
import sqlite3

rng = random.Random(2023)
db = sqlite3.connect("/app/shop.db")
db.executescript("""
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id),
                          product_id INTEGER NOT NULL REFERENCES products(id),
                          quantity INTEGER NOT NULL, unit_price_cents INTEGER NOT NULL);
""")
countries = ["DE", "FR", "US", "JP", "BR", "NL", "IT"]
for cid in range(1, 41):
    db.execute("INSERT INTO customers VALUES (?, ?, ?)", (cid, f"customer{cid:02d}", rng.choice(countries[:6])))
db.execute("INSERT INTO customers VALUES (41, 'customer41', 'IT')")  # never orders
products = ["widget", "gadget", "doohickey", "gizmo", "sprocket", "flange", "grommet", "bracket"]
for pid, name in enumerate(products, 1):
    db.execute("INSERT INTO products VALUES (?, ?, ?)", (pid, name, rng.choice(["tools", "parts"])))
oid = 0
for _ in range(400):
    oid += 1
    year = rng.choice([2022, 2023, 2023, 2023, 2024])
    date = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    status = rng.choices(["completed", "cancelled", "refunded"], [8, 1, 1])[0]
    db.execute("INSERT INTO orders VALUES (?, ?, ?, ?)", (oid, rng.randint(1, 40), date, status))
    if oid % 97 == 0:
        continue  # an order without items
    for _ in range(rng.randint(1, 4)):
        pid = rng.randint(1, len(products))
        db.execute("INSERT INTO order_items VALUES (?, ?, ?, ?)",
                   (oid, pid, rng.randint(1, 5), 199 + 100 * pid + rng.randint(0, 50)))
# boundary dates
db.execute("INSERT INTO orders VALUES (401, 3, '2023-12-31', 'completed')")
db.execute("INSERT INTO order_items VALUES (401, 2, 3, 1000)")
db.execute("INSERT INTO orders VALUES (402, 3, '2024-01-01', 'completed')")
db.execute("INSERT INTO order_items VALUES (402, 2, 9, 1000)")
db.execute("INSERT INTO orders VALUES (403, 5, '2023-01-01', 'completed')")
db.commit()
db.close()
