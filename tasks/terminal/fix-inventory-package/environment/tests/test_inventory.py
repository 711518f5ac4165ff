from decimal import Decimal

import pytest

from inventory import Inventory, InsufficientStock, Item, load_csv


def test_add_and_get():
    inv = Inventory()
    inv.add(Item("A1", "bolt", Decimal("0.25"), 10))
    assert inv.get("A1").qty == 10


def test_remove_some():
    inv = Inventory()
    inv.add(Item("B2", "nut", Decimal("0.10"), 5))
    assert inv.remove("B2", 2) == 3


def test_remove_too_many():
    inv = Inventory()
    inv.add(Item("C3", "gear", Decimal("4.00"), 1))
    with pytest.raises(InsufficientStock):
        inv.remove("C3", 2)


def test_load_sample():
    inv = load_csv("data/stock.csv")
    assert len(inv) == 4
