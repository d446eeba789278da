from decimal import Decimal

import pytest
from inventory.errors import InventoryError
from inventory.orders import order_total, split_batches


def test_order_total():
    prices = {"TEA-POT": "12.50", "CUP": "EUR 3,333"}
    assert order_total([("tea pot", 2), ("cup", 3)], prices) == Decimal("34.99")
    assert order_total([], prices) == Decimal("0.00")
    with pytest.raises(InventoryError):
        order_total([("saucer", 1)], prices)


def test_split_batches():
    assert split_batches(range(5), 2) == [[0, 1], [2, 3], [4]]
    assert split_batches([], 3) == []
    with pytest.raises(InventoryError):
        split_batches([1], 0)
