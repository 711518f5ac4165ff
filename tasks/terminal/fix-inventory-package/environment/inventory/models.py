from dataclasses import dataclass
from decimal import Decimal


@dataclass
class Item:
    """One stock-keeping unit. price is a Decimal (unit price), qty a non-negative int."""

    sku: str
    name: str
    price: Decimal
    qty: int = 0

    def value(self) -> Decimal:
        """price * qty (exact, not rounded)."""
        return self.price * self.qty
