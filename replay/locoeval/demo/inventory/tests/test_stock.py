import pytest
from inventory.errors import InventoryError
from inventory.stock import Stock


def test_remove():
    stock = Stock()
    stock.add("tea pot", 3)
    assert stock.remove("TEA-POT", 1) == 2
    with pytest.raises(InventoryError):
        stock.remove("tea pot", 5)
    with pytest.raises(InventoryError):
        stock.remove("tea pot", 0)
    assert stock.remove("tea pot", 2) == 0
    assert "TEA-POT" not in stock.levels


def test_low_stock():
    stock = Stock()
    stock.add("b", 2)
    stock.add("a", 2)
    stock.add("c", 9)
    stock.add("d", 1)
    assert stock.low_stock() == ["D", "A", "B"]
    assert stock.low_stock(2) == ["D"]
