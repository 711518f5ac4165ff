import subprocess
import sys
from decimal import Decimal

import pytest

sys.path.insert(0, "/app")
sys.dont_write_bytecode = True

from inventory import Inventory, InsufficientStock, InventoryError, Item, UnknownItem, load_csv  # noqa: E402


def test_inventories_are_independent():
    a = Inventory()
    a.add(Item("X", "x", Decimal("1.00"), 1))
    b = Inventory()
    assert len(b) == 0
    with pytest.raises(UnknownItem):
        b.get("X")


def test_add_stores_a_copy():
    item = Item("A1", "bolt", Decimal("0.25"), 10)
    inv = Inventory()
    inv.add(item)
    inv.add(item)
    assert inv.get("A1").qty == 20
    assert item.qty == 10
    item.qty = 999
    assert inv.get("A1").qty == 20


def test_add_existing_keeps_name_and_price():
    inv = Inventory()
    inv.add(Item("A1", "bolt", Decimal("0.25"), 1))
    inv.add(Item("A1", "other", Decimal("9.99"), 2))
    got = inv.get("A1")
    assert (got.name, got.price, got.qty) == ("bolt", Decimal("0.25"), 3)


def test_remove_exact_stock_keeps_item():
    inv = Inventory()
    inv.add(Item("C3", "gear", Decimal("4.00"), 3))
    assert inv.remove("C3", 3) == 0
    assert inv.get("C3").qty == 0
    assert len(inv) == 1


def test_remove_too_many_changes_nothing():
    inv = Inventory()
    inv.add(Item("C3", "gear", Decimal("4.00"), 3))
    with pytest.raises(InsufficientStock):
        inv.remove("C3", 4)
    assert inv.get("C3").qty == 3
    with pytest.raises(InventoryError):
        inv.remove("C3", 5)


def test_remove_unknown():
    inv = Inventory()
    with pytest.raises(UnknownItem):
        inv.remove("nope", 1)
    with pytest.raises(KeyError):
        inv.get("nope")


def test_low_stock_strict():
    inv = Inventory()
    for sku, q in (("b", 5), ("a", 2), ("c", 6), ("d", 0)):
        inv.add(Item(sku, sku, Decimal("1"), q))
    assert inv.low_stock(5) == ["a", "d"]
    assert inv.low_stock(6) == ["a", "b", "d"]
    assert inv.low_stock(0) == []


def test_total_value_exact_cents():
    inv = Inventory()
    inv.add(Item("p", "p", Decimal("0.125"), 1))
    assert inv.total_value() == Decimal("0.13")
    assert isinstance(inv.total_value(), Decimal)
    inv2 = Inventory()
    inv2.add(Item("q", "q", Decimal("1.15"), 3))
    inv2.add(Item("r", "r", Decimal("0.1"), 3))
    assert str(inv2.total_value()) == "3.75"
    assert str(Inventory().total_value()) == "0.00"


def test_load_csv_exact(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("sku,name,price,qty\n A1 , bolt ,0.10, 3\nB2,nut,1.15,3\nA1,bolt again,5.00,2\nZ9,zip,2.675,1\n")
    inv = load_csv(str(p))
    assert len(inv) == 3
    a1 = inv.get("A1")
    assert (a1.name, a1.price, a1.qty) == ("bolt", Decimal("0.10"), 5)
    assert inv.get("B2").price == Decimal("1.15")
    assert inv.get("Z9").price == Decimal("2.675")
    assert str(inv.total_value()) == "6.63"


def test_load_csv_twice_independent(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("sku,name,price,qty\nA1,bolt,0.25,4\n")
    one = load_csv(str(p))
    two = load_csv(str(p))
    one.remove("A1", 4)
    assert two.get("A1").qty == 4
    assert len(load_csv(str(p))) == 1


def test_sample_file():
    inv = load_csv("/app/data/stock.csv")
    assert str(inv.total_value()) == "83.90"
    assert inv.low_stock(10) == ["C3", "D4"]


def test_visible_suite_passes():
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd="/app",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
