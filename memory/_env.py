"""Settings read from the environment, checked where they are read."""

from __future__ import annotations

import os


def positive_threads(name: str) -> int | None:
    """A thread count from ``$name``: None when unset or blank; raises ``ValueError``
    naming the variable when it is not a positive number."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name}={raw!r} is not a positive number of threads")
    return value
