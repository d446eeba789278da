"""Reports for people."""

import json

from inventory.money import format_price, parse_price


def stock_report(stock, prices):
    """A JSON report: each SKU with quantity and stock value, sorted by SKU."""
    rows = []
    for sku in sorted(stock.levels):
        qty = stock.levels[sku]
        value = parse_price(prices.get(sku, "0")) * qty
        rows.append({"sku": sku, "qty": qty, "value": format_price(value)})
    return json.dumps(rows, indent=2)
