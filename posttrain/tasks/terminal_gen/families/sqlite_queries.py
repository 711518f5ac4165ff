"""SQLite queries with the sqlite3 CLI over a database built at image build time."""

from __future__ import annotations

import random
from dataclasses import dataclass

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem, words

DB_HELPERS = """
import sqlite3


def rows(database, query):
    with sqlite3.connect(f'file:{database}?mode=ro', uri=True) as connection:
        return connection.execute(query).fetchall()
"""
TABLES = "customers(id, name) and orders(id, customer_id, amount)"


@dataclass
class Shop:
    db: str  # path under the root
    customers: list[str]
    orders: list[tuple[int, int, int]]
    sql_path: str  # the script that builds it, removed at image build time
    sql: str
    checks: VerifierTests

    def totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for _, customer, amount in self.orders:
            totals[self.customers[customer - 1]] = totals.get(self.customers[customer - 1], 0) + amount
        return totals


def _shop(rng: random.Random, layout: Layout, keep_orders: bool = True) -> Shop:
    name = stem(rng)
    folder = layout.folder("data", "shop data")
    customers = people(rng, rng.randint(4, 6))
    orders = [(i + 1, rng.randrange(len(customers)) + 1, rng.randint(5, 300)) for i in range(rng.randint(10, 20))]
    sql = (
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);\n"
        + "".join(f"INSERT INTO customers VALUES ({i + 1}, '{c}');\n" for i, c in enumerate(customers))
        + "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount INTEGER);\n"
        + "".join(f"INSERT INTO orders VALUES ({o}, {c}, {a});\n" for o, c, a in orders)
    )
    db = f"{folder}/{name}.db"
    checks = VerifierTests(DB_HELPERS)
    if keep_orders:
        checks.add(
            "data_kept",
            f"assert rows({layout.path(db)!r}, 'SELECT * FROM orders ORDER BY id') == {[tuple(o) for o in orders]!r}",
        )
    return Shop(db, customers, orders, f"{folder}/{name}.sql", sql, checks)


def _setup(shop: Shop, layout: Layout) -> list[str]:
    return [f"sqlite3 {layout.sh(shop.db)} < {layout.sh(shop.sql_path)} && rm {layout.sh(shop.sql_path)}"]


def _query_task(shop: Shop, layout: Layout, spec: Spec, steps: list[str]) -> TaskParts:
    return TaskParts(
        instruction=Spec(
            spec.goal,
            [f"The SQLite database {layout.show(shop.db)} has tables {TABLES}", *spec.inputs],
            spec.output,
            spec.notes,
        ),
        files={shop.sql_path: shop.sql},
        tests=shop.checks.render(),
        steps=steps,
        setup=_setup(shop, layout),
    )


def count_where(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    big = rng.choice(sorted({a for _, _, a in shop.orders})[:-1] or [0])  # at least one order above it
    shop.checks.value(layout.path("count.txt"), str(sum(a > big for _, _, a in shop.orders)))
    spec = Spec(
        f"write the number of orders with amount greater than {big} to {layout.show('count.txt')}",
        output="just the integer",
    )
    query = f"SELECT COUNT(*) FROM orders WHERE amount > {big}"
    return _query_task(shop, layout, spec, [f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('count.txt')}"])


def customer_totals(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    shop.checks.lines(layout.path("totals.txt"), [f"{c}|{t}" for c, t in sorted(shop.totals().items())])
    spec = Spec(
        f"write each customer's name and order total to {layout.show('totals.txt')}",
        output="name|total lines, sorted by name, customers without orders left out",
    )
    query = (
        "SELECT c.name, SUM(o.amount) FROM customers c JOIN orders o ON o.customer_id = c.id "
        "GROUP BY c.id ORDER BY c.name"
    )
    return _query_task(shop, layout, spec, [f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('totals.txt')}"])


def top_customers(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    totals = shop.totals()
    limit = sorted(totals.values())[len(totals) // 2] - 1  # at least one customer above it
    shop.checks.lines(layout.path("report/top.txt"), sorted(c for c, t in totals.items() if t > limit))
    spec = Spec(
        f"write the names of the customers whose orders total more than {limit} to {layout.show('report/top.txt')}",
        output="one name per line, sorted",
        notes=[f"{layout.show('report')} does not exist yet."],
    )
    query = (
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id "
        f"HAVING SUM(o.amount) > {limit} ORDER BY c.name"
    )
    steps = [
        f"mkdir -p {layout.sh('report')}",
        f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('report/top.txt')}",
    ]
    return _query_task(shop, layout, spec, steps)


def largest_order(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    shop.checks.value(layout.path("largest.txt"), str(max(a for _, _, a in shop.orders)))
    spec = Spec(f"write the largest order amount to {layout.show('largest.txt')}", output="just the integer")
    query = "SELECT MAX(amount) FROM orders"
    return _query_task(shop, layout, spec, [f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('largest.txt')}"])


def customer_names(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    shop.checks.lines(layout.path("customers.txt"), sorted(shop.customers))
    spec = Spec(
        f"write the names of all customers to {layout.show('customers.txt')}", output="one name per line, sorted"
    )
    query = "SELECT name FROM customers ORDER BY name"
    return _query_task(shop, layout, spec, [f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('customers.txt')}"])


def add_customer(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    new = rng.choice([p for p in people(rng, 8) if p not in shop.customers])
    expected = [(i + 1, c) for i, c in enumerate(shop.customers)] + [(len(shop.customers) + 1, new)]
    shop.checks.add(
        "inserted", f"assert rows({layout.path(shop.db)!r}, 'SELECT * FROM customers ORDER BY id') == {expected!r}"
    )
    spec = Spec(f"add a customer named {new} with id {len(shop.customers) + 1} to the customers table")
    insert = f"INSERT INTO customers VALUES ({len(shop.customers) + 1}, '{new}')"
    return _query_task(shop, layout, spec, [f'sqlite3 {layout.sh(shop.db)} "{insert}"'])


def delete_small(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout, keep_orders=False)
    limit = sorted(a for _, _, a in shop.orders)[len(shop.orders) // 3] + 1  # some orders below it
    kept = [tuple(o) for o in shop.orders if o[2] >= limit]
    shop.checks.add("deleted", f"assert rows({layout.path(shop.db)!r}, 'SELECT * FROM orders ORDER BY id') == {kept!r}")
    spec = Spec(f"delete every order whose amount is below {limit}", notes=["Keep all other orders and customers."])
    return _query_task(
        shop, layout, spec, [f"sqlite3 {layout.sh(shop.db)} 'DELETE FROM orders WHERE amount < {limit}'"]
    )


def raise_amounts(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout, keep_orders=False)
    cid = shop.orders[rng.randrange(len(shop.orders))][1]
    name, extra = shop.customers[cid - 1], rng.randint(2, 20)
    expected = [(o, c, a + extra if c == cid else a) for o, c, a in shop.orders]
    shop.checks.add(
        "updated", f"assert rows({layout.path(shop.db)!r}, 'SELECT * FROM orders ORDER BY id') == {expected!r}"
    )
    spec = Spec(
        f"add {extra} to the amount of every order of the customer named {name}",
        notes=["Other customers' orders stay as they are."],
    )
    who = f"(SELECT id FROM customers WHERE name = '{name}')"
    update = f"UPDATE orders SET amount = amount + {extra} WHERE customer_id = {who}"
    return _query_task(shop, layout, spec, [f'sqlite3 {layout.sh(shop.db)} "{update}"'])


def export_csv(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    shop.checks.lines(
        layout.path("orders.csv"), ["id,customer_id,amount"] + [f"{o},{c},{a}" for o, c, a in shop.orders]
    )
    spec = Spec(
        f"export the orders table to {layout.show('orders.csv')}",
        output="CSV with the header line id,customer_id,amount, then one row per order by id",
    )
    query = "SELECT * FROM orders ORDER BY id"
    return _query_task(
        shop, layout, spec, [f"sqlite3 -header -csv {layout.sh(shop.db)} '{query}' > {layout.sh('orders.csv')}"]
    )


def without_orders(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    lonely = {len(shop.customers), rng.randint(1, len(shop.customers) - 1)}  # customers with no orders
    taken = [c for c in range(1, len(shop.customers) + 1) if c not in lonely]
    shop.orders = [(o, c if c not in lonely else taken[o % len(taken)], a) for o, c, a in shop.orders]
    shop.sql = (
        shop.sql.split("CREATE TABLE orders")[0]
        + "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount INTEGER);\n"
        + "".join(f"INSERT INTO orders VALUES ({o}, {c}, {a});\n" for o, c, a in shop.orders)
    )
    shop.checks = VerifierTests(DB_HELPERS)
    shop.checks.lines(layout.path("report/no_orders.txt"), sorted(shop.customers[c - 1] for c in lonely))
    spec = Spec(
        f"write the names of the customers that have no orders at all to {layout.show('report/no_orders.txt')}",
        output="one name per line, sorted",
        notes=[f"{layout.show('report')} does not exist yet."],
    )
    query = (
        "SELECT c.name FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE o.id IS NULL ORDER BY c.name"
    )
    return _query_task(
        shop,
        layout,
        spec,
        [
            f"mkdir -p {layout.sh('report')}",
            f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('report/no_orders.txt')}",
        ],
    )


def import_csv(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    products = [(w, rng.randint(1, 300)) for w in words(rng, rng.randint(5, 9))]
    limit = sorted(p for _, p in products)[len(products) // 2]
    csv_rel = f"{layout.folder('imports', 'new imports')}/products.csv"
    shop.checks.add(
        "imported",
        f"assert sorted(rows({layout.path(shop.db)!r}, 'SELECT name, price FROM products')) == {sorted(products)!r}",
    )
    shop.checks.value(layout.path("expensive_products.txt"), str(sum(p > limit for _, p in products)))
    spec = Spec(
        f"import {layout.show(csv_rel)} into a new table products (columns name, price) of the database, then write "
        f"how many products cost more than {limit} to {layout.show('expensive_products.txt')}",
        inputs=[f"{layout.show(csv_rel)} has the header line name,price"],
        output="just the integer",
        notes=["Do not import the header line as a row."],
    )
    parts = _query_task(
        shop,
        layout,
        spec,
        [
            f"sqlite3 {layout.sh(shop.db)} 'CREATE TABLE products (name TEXT, price INTEGER)' "
            f"'.import --csv --skip 1 \"{layout.path(csv_rel)}\" products'",
            f"sqlite3 {layout.sh(shop.db)} 'SELECT COUNT(*) FROM products WHERE price > {limit}' > "
            f"{layout.sh('expensive_products.txt')}",
        ],
    )
    csv_text = "name,price\n" + "".join(f"{n},{p}\n" for n, p in products)
    return TaskParts(parts.instruction, {**parts.files, csv_rel: csv_text}, parts.tests, parts.steps, parts.setup)


def average_per_customer(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    counts: dict[str, int] = {}
    for _, c, _ in shop.orders:
        counts[shop.customers[c - 1]] = counts.get(shop.customers[c - 1], 0) + 1
    totals = shop.totals()
    shop.checks.lines(layout.path("stats/averages.txt"), [f"{c}|{totals[c] // counts[c]}" for c in sorted(totals)])
    spec = Spec(
        f"write each customer's average order amount, rounded down to an integer, to "
        f"{layout.show('stats/averages.txt')}",
        output="name|average lines sorted by name, customers without orders left out",
        notes=[f"{layout.show('stats')} does not exist yet."],
    )
    query = (
        "SELECT c.name, SUM(o.amount) / COUNT(*) FROM customers c JOIN orders o ON o.customer_id = c.id "
        "GROUP BY c.id ORDER BY c.name"
    )
    return _query_task(
        shop,
        layout,
        spec,
        [
            f"mkdir -p {layout.sh('stats')}",
            f"sqlite3 {layout.sh(shop.db)} '{query}' > {layout.sh('stats/averages.txt')}",
        ],
    )


FAMILY = Family(
    name="sqlite",
    skill="query a SQLite database with the sqlite3 CLI",
    templates={
        1: (
            Template("count-where", "count rows with a WHERE", count_where),
            Template("largest-order", "MAX of a column", largest_order),
            Template("customer-names", "SELECT with ORDER BY", customer_names),
            Template("add-customer", "INSERT a row", add_customer),
        ),
        2: (
            Template("customer-totals", "a JOIN with GROUP BY into name|total lines", customer_totals),
            Template("delete-small", "DELETE rows by a condition", delete_small),
            Template("raise-amounts", "UPDATE with a subquery", raise_amounts),
            Template("export-csv", "export a table as CSV with a header", export_csv),
        ),
        3: (
            Template("top-customers", "a JOIN with HAVING into a file in a folder that does not exist", top_customers),
            Template("without-orders", "a LEFT JOIN for missing rows into a new folder", without_orders),
            Template("import-csv", "import a CSV into a new table, then query it", import_csv),
            Template(
                "average-per-customer", "AVG by integer division per group into a new folder", average_per_customer
            ),
        ),
    },
)
