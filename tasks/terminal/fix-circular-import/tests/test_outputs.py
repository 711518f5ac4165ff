import json
import subprocess
import sys
from decimal import Decimal, ROUND_HALF_UP

import pytest


def money(x):
    sign = "-" if x < 0 else ""
    return f"{sign}${abs(x):,.2f}"


def ref_report(rows):
    per = {}
    for r in rows:
        g = (Decimal(r["net"]) * Decimal("1.20")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        if r.get("refunded", False):
            g = -g
        c, t = per.get(r["customer"], (0, Decimal(0)))
        per[r["customer"]] = (c + 1, t + g)
    lines = ["Sales report"]
    for name in sorted(per):
        c, t = per[name]
        lines.append(f"{name}: {c} {'order' if c == 1 else 'orders'}, {money(t)}")
    n = sum(c for c, _ in per.values())
    total = sum((t for _, t in per.values()), Decimal(0))
    lines.append(f"TOTAL: {n} {'order' if n == 1 else 'orders'}, {money(total)}")
    return "\n".join(lines) + "\n"


def run(*args, **kw):
    return subprocess.run([sys.executable, "-B", *args], cwd="/app", capture_output=True, text=True, **kw)


@pytest.mark.parametrize("module", ["shop.models", "shop.report", "shop.formatting", "shop"])
def test_each_module_imports_alone(module):
    r = run("-c", f"import {module}")
    assert r.returncode == 0, r.stderr


def test_sample_report():
    r = run("-m", "shop.report", "data/orders.json")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Sales report\nalice: 2 orders, $1,234.56\nbob: 1 order, -$12.00\nTOTAL: 3 orders, $1,222.56\n"


ROWS = [
    [{"id": "a", "customer": "zed", "net": "0.04"}, {"id": "b", "customer": "Amy", "net": "999999.99"},
     {"id": "c", "customer": "amy", "net": "0.00"}, {"id": "d", "customer": "zed", "net": "5000", "refunded": True},
     {"id": "e", "customer": "bo", "net": "12.345"}],
    [{"id": "x", "customer": "solo", "net": "10.00", "refunded": True}],
    [{"id": "x", "customer": "p", "net": "1.00"}, {"id": "y", "customer": "p", "net": "1.00", "refunded": True}],
]


@pytest.mark.parametrize("rows", ROWS)
def test_hidden_reports(rows, tmp_path):
    p = tmp_path / "orders file.json"
    p.write_text(json.dumps(rows))
    r = run("-m", "shop.report", str(p))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ref_report(rows)


def test_library_use(tmp_path):
    p = tmp_path / "o.json"
    p.write_text(json.dumps(ROWS[0]))
    code = (
        "from shop.models import Order\n"
        "from shop.report import build_report, load, TAX_RATE\n"
        "from decimal import Decimal\n"
        f"orders = load({str(p)!r})\n"
        "assert isinstance(orders[0], Order) and TAX_RATE == Decimal('0.20')\n"
        "assert Order('q', 'c', Decimal('10.00')).gross() == Decimal('12.00')\n"
        "print(build_report(orders), end='')\n"
    )
    r = run("-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ref_report(ROWS[0])
