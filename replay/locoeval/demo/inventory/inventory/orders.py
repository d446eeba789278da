"""Orders: totals and batching."""

from decimal import Decimal
from itertools import islice

from inventory.errors import InventoryError
from inventory.money import parse_price, quantize_cents
from inventory.text import normalize_sku


def order_total(lines, prices):
    """Total of an order: sum of qty times unit price, rounded to cents.

    lines is a list of (sku, qty); prices maps SKUs to price strings. A SKU
    without a price raises InventoryError."""
    total = Decimal("0")
    for sku, qty in lines:
        key = normalize_sku(sku)
        if key not in prices:
            raise InventoryError(f"no price for {key}")
        total += parse_price(prices[key]) * qty
    return quantize_cents(total)


def split_batches(items, size):
    """Split items into lists of at most size elements, keeping order."""
    if size < 1:
        raise InventoryError("batch size must be at least 1")
    it = iter(items)
    batches = []
    while batch := list(islice(it, size)):
        batches.append(batch)
    return batches
