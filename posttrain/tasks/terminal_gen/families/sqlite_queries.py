"""SQLite queries with the sqlite3 CLI over a database built at image build time."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem

DB_HELPERS = """
import sqlite3


def rows(database, query):
    with sqlite3.connect(f'file:{database}?mode=ro', uri=True) as connection:
        return connection.execute(query).fetchall()
"""


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests(DB_HELPERS)
    name = stem(rng)
    db = f"/app/data/{name}.db"
    customers = people(rng, rng.randint(4, 6))
    orders = [(i + 1, rng.randrange(len(customers)) + 1, rng.randint(5, 300)) for i in range(rng.randint(10, 20))]
    sql = (
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);\n"
        + "".join(f"INSERT INTO customers VALUES ({i + 1}, '{c}');\n" for i, c in enumerate(customers))
        + "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount INTEGER);\n"
        + "".join(f"INSERT INTO orders VALUES ({o}, {c}, {a});\n" for o, c, a in orders)
    )
    setup = [f"sqlite3 {db} < /app/data/{name}.sql && rm /app/data/{name}.sql"]
    checks.add(
        "data_kept", f"assert rows({db!r}, 'SELECT * FROM orders ORDER BY id') == {[tuple(o) for o in orders]!r}"
    )
    totals: dict[str, int] = {}
    for _, customer, amount in orders:
        totals[customers[customer - 1]] = totals.get(customers[customer - 1], 0) + amount
    tables = "customers(id, name) and orders(id, customer_id, amount)"
    if difficulty == 1:
        big = rng.choice(sorted({a for _, _, a in orders})[:-1] or [0])  # at least one order above it
        checks.value("/app/count.txt", str(sum(a > big for _, _, a in orders)))
        return TaskParts(
            instruction=f"The SQLite database {db} has tables {tables}. Write the number of orders with amount "
            f"greater than {big} to /app/count.txt (just the integer).",
            files={f"data/{name}.sql": sql},
            tests=checks.render(),
            steps=[f"sqlite3 {db} 'SELECT COUNT(*) FROM orders WHERE amount > {big}' > /app/count.txt"],
            setup=setup,
        )
    if difficulty == 2:
        checks.lines("/app/totals.txt", [f"{c}|{t}" for c, t in sorted(totals.items())])
        return TaskParts(
            instruction=f"The SQLite database {db} has tables {tables}. Write each customer's name and order total "
            "as name|total lines, sorted by name, to /app/totals.txt (customers without orders left out).",
            files={f"data/{name}.sql": sql},
            tests=checks.render(),
            steps=[
                f"sqlite3 {db} 'SELECT c.name, SUM(o.amount) FROM customers c JOIN orders o ON o.customer_id = c.id "
                "GROUP BY c.id ORDER BY c.name' > /app/totals.txt"
            ],
            setup=setup,
        )
    limit = sorted(totals.values())[len(totals) // 2] - 1  # at least one customer above it
    checks.lines("/app/report/top.txt", sorted(c for c, t in totals.items() if t > limit))
    return TaskParts(
        instruction=f"The SQLite database {db} has tables {tables}. Write the names of the customers whose orders "
        f"total more than {limit}, sorted, one per line, to /app/report/top.txt (/app/report does not exist yet).",
        files={f"data/{name}.sql": sql},
        tests=checks.render(),
        steps=[
            "mkdir -p /app/report",
            f"sqlite3 {db} 'SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id "
            f"HAVING SUM(o.amount) > {limit} ORDER BY c.name' > /app/report/top.txt",
        ],
        setup=setup,
    )


FAMILY = Family(
    name="sqlite",
    skill="query a SQLite database with the sqlite3 CLI",
    levels=(
        "count rows with a WHERE",
        "a JOIN with GROUP BY into name|total lines",
        "a JOIN with HAVING into a file in a folder that does not exist",
    ),
    build=build,
)
