"""Delivery dates."""

from datetime import date, timedelta

from inventory.errors import InventoryError


def parse_day(text):
    """Parse 'YYYY-MM-DD' or 'DD.MM.YYYY' into a date; InventoryError otherwise."""
    text = text.strip()
    try:
        if "." in text:
            day, month, year = (int(p) for p in text.split("."))
            return date(year, month, day)
        return date.fromisoformat(text)
    except ValueError as exc:
        raise InventoryError(f"not a day: {text!r}") from exc


def business_days(start, end):
    """Working days (Monday to Friday) from start up to, not including, end."""
    if end < start:
        raise InventoryError("end before start")
    days = 0
    current = start
    while current < end:
        if current.weekday() < 5:
            days += 1
        current += timedelta(days=1)
    return days
