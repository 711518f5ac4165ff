"""CSV and JSON transforms with jq: pick fields, filter and sort, JSON to CSV with a header."""

from __future__ import annotations

import json
import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem, words


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    if difficulty in (1, 2):
        name = stem(rng)
        items = [
            {"name": w, "price": rng.randint(1, 200), "stock": rng.randint(0, 50)}
            for w in words(rng, rng.randint(6, 10))
        ]
        text = json.dumps(items, indent=2) + "\n"
        path = f"/app/data/{name}.json"
        checks.unchanged(path, text)
        if difficulty == 1:
            field = rng.choice(("name", "price"))
            checks.lines(f"/app/{field}s.txt", [str(item[field]) for item in items])
            return TaskParts(
                instruction=f"{path} is a JSON array of objects with name, price and stock. Write the {field} of each "
                f"object, one per line in file order, to /app/{field}s.txt.",
                files={f"data/{name}.json": text},
                tests=checks.render(),
                steps=[f"jq -r '.[].{field}' {path} > /app/{field}s.txt"],
            )
        limit = sorted(item["price"] for item in items)[len(items) // 2]
        checks.lines("/app/selected.txt", sorted(item["name"] for item in items if item["price"] > limit))
        return TaskParts(
            instruction=f"{path} is a JSON array of objects with name, price and stock. Write the names of the objects "
            f"with price greater than {limit}, sorted alphabetically, one per line, to /app/selected.txt.",
            files={f"data/{name}.json": text},
            tests=checks.render(),
            steps=[f"jq -r '.[] | select(.price > {limit}) | .name' {path} | sort > /app/selected.txt"],
        )
    # the array sits under a key, and the CSV needs a header line: the two traps
    status = rng.choice(("paid", "shipped"))
    orders = [
        {"id": 100 + i, "customer": rng.choice(people(rng, 6)), "total": rng.randint(10, 900),
         "status": rng.choice(("paid", "shipped", "pending"))}
        for i in range(rng.randint(8, 14))
    ]  # fmt: skip
    if not any(o["status"] == status for o in orders):
        orders[0]["status"] = status
    text = json.dumps({"exported": "2024-05-01", "orders": orders}, indent=2) + "\n"
    checks.unchanged("/app/data/orders.json", text)
    checks.lines(
        "/app/report.csv",
        ["customer,total"] + [f"{o['customer']},{o['total']}" for o in orders if o["status"] == status],
    )
    query = f'.orders[] | select(.status == "{status}") | "\\(.customer),\\(.total)"'
    return TaskParts(
        instruction=f"/app/data/orders.json holds an object whose 'orders' key is a list of orders. Write "
        f"/app/report.csv: the header line customer,total then, for each order with status '{status}' in file order, "
        "its customer and total separated by a comma.",
        files={"data/orders.json": text},
        tests=checks.render(),
        steps=[
            "echo 'customer,total' > /app/report.csv",
            f"jq -r '{query}' /app/data/orders.json >> /app/report.csv",
        ],
    )


FAMILY = Family(
    name="csv-json",
    skill="extract, filter and reshape JSON and CSV with jq",
    levels=(
        "one field of every object",
        "select by a number, then sort",
        "JSON under a key to CSV with a header line",
    ),
    build=build,
)
