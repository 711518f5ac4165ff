#!/bin/bash
cat > /app/expenses.py <<'EOF'
from decimal import Decimal


def parse_amount(text):
    """Return the amount in `text` as integer cents."""
    s = text.strip()
    neg = False
    if s.startswith('(') and s.endswith(')'):
        neg, s = True, s[1:-1]
    s = s.replace('USD', '').replace('$', '').replace(',', '').strip()
    if s.startswith('-'):
        neg, s = not neg, s[1:]
    cents = int((Decimal(s) * 100).to_integral_value())
    return -cents if neg else cents
EOF
