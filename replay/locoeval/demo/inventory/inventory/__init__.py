"""inventory: stock, prices and orders for a small shop."""
