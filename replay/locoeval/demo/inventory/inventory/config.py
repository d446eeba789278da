"""Settings shared by the modules."""

CURRENCY = "EUR"
MAX_SKU_LENGTH = 12
LOW_STOCK_DEFAULT = 5
CENTS = "0.01"
