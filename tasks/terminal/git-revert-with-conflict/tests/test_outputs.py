import importlib.util
import subprocess
from decimal import Decimal
from pathlib import Path


def git(*args):
    return subprocess.run(["git", "-C", "/app", *args], capture_output=True, text=True, check=True).stdout.strip()


def load():
    spec = importlib.util.spec_from_file_location("pricing_under_test", "/app/pricing.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_revert_commit_shape():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert git("rev-list", "--count", "main") == "6"
    assert git("log", "-1", "--format=%s", "main") == 'Revert "Use float arithmetic for totals"'
    assert len(git("log", "-1", "--format=%P", "main").split()) == 1
    assert git("log", "--format=%s", "main~1").splitlines() == [
        "Expand README", "Support order discounts", "Use float arithmetic for totals", "Add tax helper",
        "Initial pricing module"]
    assert git("diff", "--name-only", "main~1", "main") == "pricing.py"


def test_clean_tree():
    assert git("status", "--porcelain") == ""
    assert not Path("/app/.git/REVERT_HEAD").exists()
    text = Path("/app/pricing.py").read_text()
    for marker in ("<<<<<<<", "=======", ">>>>>>>"):
        assert marker not in text
    assert "FAST" not in text and "float(" not in text


def test_line_total_exact():
    p = load()
    assert p.line_total("19.99", 3) == Decimal("59.97")
    assert isinstance(p.line_total("19.99", 3), Decimal)
    assert str(p.line_total("0.125", 1)) == "0.13"
    assert str(p.line_total("2.675", 1)) == "2.68"


def test_order_total_exact_with_discount():
    p = load()
    r = p.order_total([("0.10", 3), ("0.20", 1)])
    assert isinstance(r, Decimal) and str(r) == "0.50"
    assert str(p.order_total([("10.00", 1), ("5.55", 1)], discount_percent=10)) == "14.00"
    assert str(p.order_total([("1.005", 1), ("0.335", 3)], 0)) == "2.02"
    assert str(p.order_total([("80.00", 1)], "12.5")) == "70.00"
    assert str(p.order_total([("0.99", 7)], 33)) == "4.64"
    assert str(p.order_total([])) == "0.00"


def test_with_tax_unchanged():
    p = load()
    assert str(p.with_tax(Decimal("10.00"), 7)) == "10.70"
    assert str(p.with_tax("0.05", "10")) == "0.06"
