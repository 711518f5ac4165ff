from decimal import Decimal


def money(amount: Decimal) -> str:
    return f"${amount:.2f}"
