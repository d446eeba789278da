from decimal import Decimal

import pytest
from inventory.errors import InventoryError
from inventory.money import format_price, parse_price


def test_parse_price():
    assert parse_price("12.505") == Decimal("12.51")
    assert parse_price("EUR 3,5") == Decimal("3.50")
    with pytest.raises(InventoryError):
        parse_price("cheap")
    with pytest.raises(InventoryError):
        parse_price("-1")


def test_format_price():
    assert format_price(Decimal("1234.5")) == "EUR 1,234.50"
    assert format_price(Decimal("0.125")) == "EUR 0.13"
