"""Text helpers: SKUs and slugs."""

import re
import unicodedata

from inventory.config import MAX_SKU_LENGTH
from inventory.errors import InventoryError


def normalize_sku(raw):
    """Turn a raw SKU into canonical form: upper-case, words joined by single dashes.

    Raises InventoryError when the result is empty or longer than MAX_SKU_LENGTH."""
    words = re.split(r"[^A-Za-z0-9]+", raw.strip())
    sku = "-".join(w.upper() for w in words if w)
    if not sku or len(sku) > MAX_SKU_LENGTH:
        raise InventoryError(f"invalid SKU {raw!r}")
    return sku


def slugify(name):
    """A lower-case ASCII slug for a product name, words joined by dashes."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_name.lower())
    return "-".join(words)
