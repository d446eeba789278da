import pytest
from inventory.errors import InventoryError
from inventory.text import normalize_sku, slugify


def test_normalize_sku():
    assert normalize_sku("  ab 12_x ") == "AB-12-X"
    assert normalize_sku("tea--pot") == "TEA-POT"
    with pytest.raises(InventoryError):
        normalize_sku(" -- ")
    with pytest.raises(InventoryError):
        normalize_sku("abcdefghij klm")


def test_slugify():
    assert slugify("Crème Brûlée  Set!") == "creme-brulee-set"
    assert slugify("Tea Pot 2") == "tea-pot-2"
    assert slugify("!!!") == ""
