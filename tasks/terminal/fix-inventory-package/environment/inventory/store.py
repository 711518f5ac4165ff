from dataclasses import replace
from decimal import Decimal, ROUND_HALF_UP

from inventory.errors import InsufficientStock, UnknownItem


class Inventory:
    """A collection of Items keyed by SKU.

    Every Inventory is independent of every other one, and of the Item objects passed to it:
    add() stores its own copy, and get() returns the stored item.
    """

    def __init__(self, items={}):
        self.items = items

    def add(self, item):
        """Add item. If the SKU exists, its qty grows by item.qty (name and price stay those
        already stored); otherwise a copy of item is stored."""
        if item.sku in self.items:
            self.items[item.sku].qty += item.qty
        else:
            self.items[item.sku] = item

    def get(self, sku):
        """The stored Item for sku; UnknownItem if absent."""
        try:
            return self.items[sku]
        except KeyError:
            raise UnknownItem(sku) from None

    def remove(self, sku, qty):
        """Take qty units of sku out of stock. UnknownItem if the SKU is absent,
        InsufficientStock (and nothing changes) if fewer than qty units are in stock. An item whose
        stock reaches 0 stays in the inventory with qty 0. Returns the remaining qty."""
        item = self.get(sku)
        if qty >= item.qty:
            raise InsufficientStock(f"{sku}: have {item.qty}, want {qty}")
        item.qty -= qty
        if item.qty == 0:
            del self.items[sku]
        return item.qty

    def total_value(self):
        """Sum of price * qty over all items, rounded half-up to cents, as a Decimal."""
        total = sum(float(i.value()) for i in self.items.values())
        return Decimal(str(round(total, 2)))

    def low_stock(self, threshold):
        """SKUs whose qty is strictly below threshold, sorted by SKU."""
        return sorted(sku for sku, item in self.items.items() if item.qty <= threshold)

    def __len__(self):
        return len(self.items)
