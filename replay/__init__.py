"""Headless replay: re-drive conversations against memory backends and score them."""
