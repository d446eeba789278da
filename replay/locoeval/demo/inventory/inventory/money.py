"""Money: parsing, rounding and formatting prices."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from inventory.config import CENTS, CURRENCY
from inventory.errors import InventoryError


def quantize_cents(amount):
    """Round a Decimal to cents, halves away from zero."""
    return amount.quantize(Decimal(CENTS), rounding=ROUND_HALF_UP)


def parse_price(text):
    """Parse a price like '12.50', '12,50' or 'EUR 12.50' into a Decimal rounded to cents.

    Raises InventoryError for anything that is not a non-negative number."""
    cleaned = text.strip().removeprefix(CURRENCY).strip().replace(",", ".")
    try:
        value = Decimal(cleaned)
    except InvalidOperation as exc:
        raise InventoryError(f"not a price: {text!r}") from exc
    if value < 0:
        raise InventoryError(f"negative price: {text!r}")
    return quantize_cents(value)


def format_price(amount):
    """Format a Decimal amount as 'EUR 1,234.50' (currency code, thousands separators)."""
    return f"{CURRENCY} {quantize_cents(amount):,.2f}"
