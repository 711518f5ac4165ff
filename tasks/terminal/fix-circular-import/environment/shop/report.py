"""python3 -m shop.report ORDERS.json  -- print the sales report (format: see README.md)."""
import json
import sys
from decimal import Decimal

from shop.formatting import money
from shop.models import Order

TAX_RATE = Decimal("0.20")


def load(path):
    with open(path) as fh:
        rows = json.load(fh)
    return [Order(r["id"], r["customer"], Decimal(r["net"]), r.get("refunded", False)) for r in rows]


def build_report(orders):
    per_customer = {}
    for order in orders:
        count, total = per_customer.get(order.customer, (0, Decimal("0")))
        amount = -order.gross() if order.refunded else order.gross()
        per_customer[order.customer] = (count + 1, total + amount)
    lines = ["Sales report"]
    for customer in sorted(per_customer):
        count, total = per_customer[customer]
        lines.append(f"{customer}: {count} {'order' if count == 1 else 'orders'}, {money(total)}")
    all_count = sum(c for c, _ in per_customer.values())
    all_total = sum((t for _, t in per_customer.values()), Decimal("0"))
    lines.append(f"TOTAL: {all_count} {'order' if all_count == 1 else 'orders'}, {money(all_total)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(build_report(load(sys.argv[1])), end="")
