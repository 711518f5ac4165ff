class InventoryError(Exception):
    """Base class of the package's errors."""


class UnknownItem(InventoryError, KeyError):
    """The SKU is not in the inventory."""


class InsufficientStock(InventoryError):
    """Removing more units than are in stock."""
