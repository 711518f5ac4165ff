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


def count_objects(rng: random.Random, layout: Layout) -> TaskParts:
    rel, items, text, checks = _items(rng, layout)
    checks.value(layout.path("count.txt"), str(len(items)))
    return TaskParts(
        instruction=Spec(
            goal=f"write how many objects the array in {layout.show(rel)} holds to {layout.show('count.txt')}",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            output="just the integer",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq length {layout.sh(rel)} > {layout.sh('count.txt')}"],
    )


def zero_stock(rng: random.Random, layout: Layout) -> TaskParts:
    name = stem(rng)
    items = [{"name": w, "price": rng.randint(1, 200), "stock": rng.choice((0, 0, 3, 7, 12))} for w in words(rng, 8)]
    items[rng.randrange(len(items))]["stock"] = 0
    text = json.dumps(items, indent=2) + "\n"
    rel = f"{layout.folder('data', 'shop data')}/{name}.json"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("restock.txt"), [i["name"] for i in items if i["stock"] == 0])
    return TaskParts(
        instruction=Spec(
            goal=f"write the names of the objects that are out of stock (stock 0) to {layout.show('restock.txt')}",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            output="one name per line, in file order",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq -r '.[] | select(.stock == 0) | .name' {layout.sh(rel)} > {layout.sh('restock.txt')}"],
    )


def _people_csv(rng: random.Random) -> tuple[list[tuple[str, str, int]], str]:
    rows = [(p, rng.choice(words(rng, 4)), rng.randint(18, 70)) for p in people(rng, rng.randint(5, 9))]
    return rows, "name,city,age\n" + "".join(f"{n},{c},{a}\n" for n, c, a in rows)


def csv_column(rng: random.Random, layout: Layout) -> TaskParts:
    rows, text = _people_csv(rng)
    rel = f"{layout.folder('data', 'team data')}/people.csv"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("cities.txt"), [c for _, c, _ in rows])
    return TaskParts(
        instruction=Spec(
            goal=f"write the city column of {layout.show(rel)} to {layout.show('cities.txt')}",
            inputs=[f"{layout.show(rel)} is a CSV file with the header line name,city,age"],
            output="one city per line in file order, without the header",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"tail -n +2 {layout.sh(rel)} | cut -d, -f2 > {layout.sh('cities.txt')}"],
    )


def stock_value(rng: random.Random, layout: Layout) -> TaskParts:
    rel, items, text, checks = _items(rng, layout)
    checks.value(layout.path("stock_value.txt"), str(sum(i["price"] * i["stock"] for i in items)))
    return TaskParts(
        instruction=Spec(
            goal=f"write the total stock value of {layout.show(rel)} (the sum of price times stock over all "
            f"objects) to {layout.show('stock_value.txt')}",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            output="just the integer",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq '[.[] | .price * .stock] | add' {layout.sh(rel)} > {layout.sh('stock_value.txt')}"],
    )


def most_expensive(rng: random.Random, layout: Layout) -> TaskParts:
    name = stem(rng)
    names = words(rng, rng.randint(6, 10))
    prices = rng.sample(range(1, 400), len(names))  # distinct: one most expensive object
    items = [{"name": n, "price": p, "stock": rng.randint(0, 50)} for n, p in zip(names, prices)]
    text = json.dumps(items, indent=2) + "\n"
    rel = f"{layout.folder('data', 'shop data')}/{name}.json"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.value(layout.path("priciest.txt"), max(items, key=lambda i: i["price"])["name"])
    return TaskParts(
        instruction=Spec(
            goal=f"write the name of the most expensive object in {layout.show(rel)} to {layout.show('priciest.txt')}",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            output="just the name",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq -r 'max_by(.price) | .name' {layout.sh(rel)} > {layout.sh('priciest.txt')}"],
    )


def csv_filter_rows(rng: random.Random, layout: Layout) -> TaskParts:
    rows, text = _people_csv(rng)
    limit = sorted(a for _, _, a in rows)[len(rows) // 2]
    rel = f"{layout.folder('data', 'team data')}/people.csv"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("older.csv"), ["name,city,age"] + [f"{n},{c},{a}" for n, c, a in rows if a > limit])
    return TaskParts(
        instruction=Spec(
            goal=f"write the rows of {layout.show(rel)} whose age is greater than {limit} to "
            f"{layout.show('older.csv')}",
            inputs=[f"{layout.show(rel)} is a CSV file with the header line name,city,age"],
            output="a CSV file: the same header line, then those rows in file order",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"awk -F, 'NR==1 || $3>{limit}' {layout.sh(rel)} > {layout.sh('older.csv')}"],
    )


def _orders(rng: random.Random) -> list[dict]:
    customers = people(rng, 5)
    return [
        {"id": 100 + i, "customer": rng.choice(customers), "total": rng.randint(10, 900),
         "status": rng.choice(("paid", "shipped", "pending"))}
        for i in range(rng.randint(8, 14))
    ]  # fmt: skip


def totals_by_customer(rng: random.Random, layout: Layout) -> TaskParts:
    orders = _orders(rng)
    text = json.dumps({"exported": "2024-05-01", "orders": orders}, indent=2) + "\n"
    rel = f"{layout.folder('data', 'shop data')}/orders.json"
    totals: dict[str, int] = {}
    for o in orders:
        totals[o["customer"]] = totals.get(o["customer"], 0) + o["total"]
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("by_customer.txt"), [f"{c} {t}" for c, t in sorted(totals.items())])
    query = '.orders | group_by(.customer)[] | "\\(.[0].customer) \\(map(.total) | add)"'
    return TaskParts(
        instruction=Spec(
            goal=f"write each customer's total over all their orders to {layout.show('by_customer.txt')}",
            inputs=[
                f"{layout.show(rel)} holds an object whose 'orders' key is a list of orders (id, customer, total, "
                "status)"
            ],
            output="one line per customer, 'customer total', sorted by customer",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq -r '{query}' {layout.sh(rel)} > {layout.sh('by_customer.txt')}"],
    )


def set_price(rng: random.Random, layout: Layout) -> TaskParts:
    rel, items, text, _ = _items(rng, layout)
    target = rng.choice(items)["name"]
    price = rng.randint(201, 999)
    expected = [dict(i, price=price) if i["name"] == target else i for i in items]
    checks = VerifierTests()
    checks.add("updated", f"import json\nassert json.loads(Path({layout.path(rel)!r}).read_text()) == {expected!r}")
    tmp = f"{rel}.tmp"
    return TaskParts(
        instruction=Spec(
            goal=f"change the price of {target} in {layout.show(rel)} to {price}, editing the file in place",
            inputs=[f"{layout.show(rel)} is {ITEMS}"],
            notes=["Every other object and field stays as it is, and the file must remain valid JSON."],
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[
            f"jq '(.[] | select(.name == \"{target}\") | .price) = {price}' {layout.sh(rel)} > {layout.sh(tmp)}",
            f"mv {layout.sh(tmp)} {layout.sh(rel)}",
        ],
    )


def csv_to_json(rng: random.Random, layout: Layout) -> TaskParts:
    rows, text = _people_csv(rng)
    rel = f"{layout.folder('data', 'team data')}/people.csv"
    expected = [{"name": n, "city": c, "age": a} for n, c, a in rows]
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.add(
        "converted", f"import json\nassert json.loads(Path({layout.path('people.json')!r}).read_text()) == {expected!r}"
    )
    query = 'split("\\n")[1:] | map(select(length > 0) | split(",") | {name: .[0], city: .[1], age: (.[2] | tonumber)})'
    return TaskParts(
        instruction=Spec(
            goal=f"convert {layout.show(rel)} to JSON in {layout.show('people.json')}",
            inputs=[f"{layout.show(rel)} is a CSV file with the header line name,city,age"],
            output="a JSON array with one object per row, keys name, city and age, age as a number",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"jq -R -s '{query}' {layout.sh(rel)} > {layout.sh('people.json')}"],
    )


FAMILY = Family(
    name="csv-json",
    skill="extract, filter and reshape JSON and CSV with jq",
    templates={
        1: (
            Template("one-field", "one field of every object", one_field),
            Template("count-objects", "the length of a JSON array", count_objects),
            Template("zero-stock", "select objects by an equal value", zero_stock),
            Template("csv-column", "one column of a CSV without its header", csv_column),
        ),
        2: (
            Template("select-sorted", "select by a number, then sort", select_sorted),
            Template("stock-value", "sum a product of two fields", stock_value),
            Template("most-expensive", "the object with the largest value (max_by)", most_expensive),
            Template("csv-filter-rows", "keep a CSV's header and the rows above a number", csv_filter_rows),
        ),
        3: (
            Template("orders-to-csv", "JSON under a key to CSV with a header line", orders_to_csv),
            Template("totals-by-customer", "group objects under a key and sum a field", totals_by_customer),
            Template("set-price", "edit one field of a JSON file in place", set_price),
            Template("csv-to-json", "convert a CSV with a header to a JSON array of objects", csv_to_json),
        ),
    },
)
