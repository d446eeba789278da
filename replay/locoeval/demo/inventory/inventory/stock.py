"""Stock levels per SKU."""

from inventory.config import LOW_STOCK_DEFAULT
from inventory.errors import InventoryError
from inventory.text import normalize_sku


class Stock:
    """Quantities on hand, keyed by normalized SKU."""

    def __init__(self):
        self.levels = {}

    def add(self, sku, qty):
        """Add qty units of sku; qty must be a positive integer."""
        if qty <= 0:
            raise InventoryError("quantity must be positive")
        key = normalize_sku(sku)
        self.levels[key] = self.levels.get(key, 0) + qty
        return self.levels[key]

    def remove(self, sku, qty):
        """Take qty units of sku out of stock and return what is left.

        Raises InventoryError when qty is not positive or more than is on hand;
        a SKU that reaches zero is dropped from the levels."""
        if qty <= 0:
            raise InventoryError("quantity must be positive")
        key = normalize_sku(sku)
        have = self.levels.get(key, 0)
        if qty > have:
            raise InventoryError(f"only {have} of {key} in stock")
        left = have - qty
        if left:
            self.levels[key] = left
        else:
            del self.levels[key]
        return left

    def low_stock(self, threshold=LOW_STOCK_DEFAULT):
        """The SKUs with fewer than threshold units, sorted by quantity then SKU."""
        low = [(qty, sku) for sku, qty in self.levels.items() if qty < threshold]
        return [sku for qty, sku in sorted(low)]
