from datetime import date

import pytest
from inventory.dates import business_days, parse_day
from inventory.errors import InventoryError


def test_parse_day():
    assert parse_day("2026-11-20") == date(2026, 11, 20)
    assert parse_day(" 20.11.2026 ") == date(2026, 11, 20)
    with pytest.raises(InventoryError):
        parse_day("20/11/2026")


def test_business_days():
    friday, monday = date(2026, 11, 20), date(2026, 11, 23)
    assert business_days(friday, monday) == 1
    assert business_days(monday, monday) == 0
    assert business_days(date(2026, 11, 16), date(2026, 11, 30)) == 10
    with pytest.raises(InventoryError):
        business_days(monday, friday)
