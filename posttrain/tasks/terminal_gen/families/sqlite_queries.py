"""SQLite queries with the sqlite3 CLI over a database built at image build time."""

from __future__ import annotations

import random
from dataclasses import dataclass

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem

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


def _shop(rng: random.Random, layout: Layout) -> Shop:
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
    checks.add(
        "data_kept",
        f"assert rows({layout.path(db)!r}, 'SELECT * FROM orders ORDER BY id') == {[tuple(o) for o in orders]!r}",
    )
    return Shop(db, customers, orders, f"{folder}/{name}.sql", sql, checks)


def _setup(shop: Shop, layout: Layout) -> list[str]:
    return [f"sqlite3 {layout.sh(shop.db)} < {layout.sh(shop.sql_path)} && rm {layout.sh(shop.sql_path)}"]


def count_where(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    big = rng.choice(sorted({a for _, _, a in shop.orders})[:-1] or [0])  # at least one order above it
    shop.checks.value(layout.path("count.txt"), str(sum(a > big for _, _, a in shop.orders)))
    return TaskParts(
        instruction=Spec(
            goal=f"write the number of orders with amount greater than {big} to {layout.show('count.txt')}",
            inputs=[f"The SQLite database {layout.show(shop.db)} has tables {TABLES}"],
            output="just the integer",
        ),
        files={shop.sql_path: shop.sql},
        tests=shop.checks.render(),
        steps=[
            f"sqlite3 {layout.sh(shop.db)} 'SELECT COUNT(*) FROM orders WHERE amount > {big}' > "
            f"{layout.sh('count.txt')}"
        ],
        setup=_setup(shop, layout),
    )


def customer_totals(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    shop.checks.lines(layout.path("totals.txt"), [f"{c}|{t}" for c, t in sorted(shop.totals().items())])
    return TaskParts(
        instruction=Spec(
            goal=f"write each customer's name and order total to {layout.show('totals.txt')}",
            inputs=[f"The SQLite database {layout.show(shop.db)} has tables {TABLES}"],
            output="name|total lines, sorted by name, customers without orders left out",
        ),
        files={shop.sql_path: shop.sql},
        tests=shop.checks.render(),
        steps=[
            f"sqlite3 {layout.sh(shop.db)} 'SELECT c.name, SUM(o.amount) FROM customers c JOIN orders o ON "
            f"o.customer_id = c.id GROUP BY c.id ORDER BY c.name' > {layout.sh('totals.txt')}"
        ],
        setup=_setup(shop, layout),
    )


def top_customers(rng: random.Random, layout: Layout) -> TaskParts:
    shop = _shop(rng, layout)
    totals = shop.totals()
    limit = sorted(totals.values())[len(totals) // 2] - 1  # at least one customer above it
    shop.checks.lines(layout.path("report/top.txt"), sorted(c for c, t in totals.items() if t > limit))
    return TaskParts(
        instruction=Spec(
            goal=f"write the names of the customers whose orders total more than {limit} to "
            f"{layout.show('report/top.txt')}",
            inputs=[f"The SQLite database {layout.show(shop.db)} has tables {TABLES}"],
            output="one name per line, sorted",
            notes=[f"{layout.show('report')} does not exist yet."],
        ),
        files={shop.sql_path: shop.sql},
        tests=shop.checks.render(),
        steps=[
            f"mkdir -p {layout.sh('report')}",
            f"sqlite3 {layout.sh(shop.db)} 'SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
            f"GROUP BY c.id HAVING SUM(o.amount) > {limit} ORDER BY c.name' > {layout.sh('report/top.txt')}",
        ],
        setup=_setup(shop, layout),
    )


FAMILY = Family(
    name="sqlite",
    skill="query a SQLite database with the sqlite3 CLI",
    templates={
        1: (Template("count-where", "count rows with a WHERE", count_where),),
        2: (Template("customer-totals", "a JOIN with GROUP BY into name|total lines", customer_totals),),
        3: (
            Template("top-customers", "a JOIN with HAVING into a file in a folder that does not exist", top_customers),
        ),
    },
)
