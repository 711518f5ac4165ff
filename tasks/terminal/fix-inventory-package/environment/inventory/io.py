import csv
from decimal import Decimal

from inventory.models import Item
from inventory.store import Inventory


def load_csv(path):
    """Read a CSV with header sku,name,price,qty (price like "19.99", exact) into a new Inventory.
    Surrounding whitespace in fields is ignored. Rows with a repeated SKU are added up (see
    Inventory.add)."""
    inv = Inventory()
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            inv.add(Item(row["sku"].strip(), row["name"].strip(), Decimal(float(row["price"])), int(row["qty"])))
    return inv
