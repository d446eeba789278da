"""Checks of raw settings (memory.settings keeps them as given), where they are used."""

from __future__ import annotations


def positive_threads(name: str, raw: str) -> int | None:
    """A thread count from the raw setting ``raw`` (of ``$name``): None when unset or
    blank; raises ``ValueError`` naming the variable when it is not a positive number."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name}={raw!r} is not a positive number of threads")
    return value
