"""Tiny double-entry-ish ledger."""
from decimal import Decimal


def balances(entries):
    """entries: iterable of dicts {acct, type: credit|debit, amount: "12.30"}.
    Return {acct: "x.yy"} with credits added and debits subtracted."""
    out = {}
    for e in entries:
        amt = float(e["amount"])
        out[e["acct"]] = out.get(e["acct"], 0) + amt
    return {k: "%.2f" % v for k, v in out.items()}
