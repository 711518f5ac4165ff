"""A tiny stock-keeping package."""
from inventory.errors import InsufficientStock, InventoryError, UnknownItem
from inventory.models import Item
from inventory.store import Inventory
from inventory.io import load_csv

__all__ = ["Inventory", "Item", "InventoryError", "UnknownItem", "InsufficientStock", "load_csv"]
