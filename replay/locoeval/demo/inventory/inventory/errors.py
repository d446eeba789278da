"""The one exception type of the library."""


class InventoryError(ValueError):
    """Raised for every invalid input or impossible operation."""
