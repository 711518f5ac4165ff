from dataclasses import dataclass
from decimal import Decimal, ROUND_HALF_UP

from shop.report import TAX_RATE


@dataclass
class Order:
    id: str
    customer: str
    net: Decimal
    refunded: bool = False

    def gross(self) -> Decimal:
        """net plus tax, rounded half-up to cents."""
        return (self.net * (1 + TAX_RATE)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
