"""CSV and JSON transforms with jq: pick fields, filter and sort, JSON to CSV with a header."""

from __future__ import annotations

import json
import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem, words

ITEMS = "a JSON array of objects with name, price and stock"


def _items(rng: random.Random, layout: Layout) -> tuple[str, list[dict], str, VerifierTests]:
    name = stem(rng)
    items = [
        {"name": w, "price": rng.randint(1, 200), "stock": rng.randint(0, 50)} for w in words(rng, rng.randint(6, 10))
    ]
    text = json.dumps(items, indent=2) + "\n"
    rel = f"{layout.folder('data', 'shop data')}/{name}.json"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    return rel, items, text, checks


def one_field(rng: random.Random, layout: Layout) -> TaskParts:
    rel, items, text, checks = _items(rng, layout)
    field = rng.choice(("name", "price"))
    out = f"{field}s.txt"
    checks.lines(layout.path(out), [str(item[field]) for item in items])
    return TaskParts(
        instruction=Spec(
            goal=f"write the {field} of each object in {layout.show(rel)} to {layout.show(out)}",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            output="one value per line, in file order",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq -r '.[].{field}' {layout.sh(rel)} > {layout.sh(out)}"],
    )


def select_sorted(rng: random.Random, layout: Layout) -> TaskParts:
    rel, items, text, checks = _items(rng, layout)
    limit = sorted(item["price"] for item in items)[len(items) // 2]
    checks.lines(layout.path("selected.txt"), sorted(item["name"] for item in items if item["price"] > limit))
    return TaskParts(
        instruction=Spec(
            goal=f"write the names of the objects with price greater than {limit} to {layout.show('selected.txt')}",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            output="one name per line, sorted alphabetically",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq -r '.[] | select(.price > {limit}) | .name' {layout.sh(rel)} | sort > {layout.sh('selected.txt')}"],
    )


def orders_to_csv(rng: random.Random, layout: Layout) -> TaskParts:
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
    rel = f"{layout.folder('data', 'shop data')}/orders.json"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(
        layout.path("report.csv"),
        ["customer,total"] + [f"{o['customer']},{o['total']}" for o in orders if o["status"] == status],
    )
    query = f'.orders[] | select(.status == "{status}") | "\\(.customer),\\(.total)"'
    return TaskParts(
        instruction=Spec(
            goal=f"write {layout.show('report.csv')} listing the orders with status '{status}'",
            inputs=[f"{layout.show(rel)} holds an object whose 'orders' key is a list of orders"],
            output="the header line customer,total then, for each such order in file order, its customer and total "
            "separated by a comma",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[
            f"echo 'customer,total' > {layout.sh('report.csv')}",
            f"jq -r '{query}' {layout.sh(rel)} >> {layout.sh('report.csv')}",
        ],
    )


FAMILY = Family(
    name="csv-json",
    skill="extract, filter and reshape JSON and CSV with jq",
    templates={
        1: (Template("one-field", "one field of every object", one_field),),
        2: (Template("select-sorted", "select by a number, then sort", select_sorted),),
        3: (Template("orders-to-csv", "JSON under a key to CSV with a header line", orders_to_csv),),
    },
)
