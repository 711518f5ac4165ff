#!/bin/bash
cat > /app/ledger.py <<'EOF'
'''Tiny double-entry-ish ledger.'''
from decimal import Decimal, ROUND_HALF_UP


def balances(entries):
    out = {}
    for e in entries:
        amt = Decimal(e["amount"])
        if e["type"] == "debit":
            amt = -amt
        out[e["acct"]] = out.get(e["acct"], Decimal(0)) + amt
    return {k: str(v.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)) for k, v in out.items()}
EOF
