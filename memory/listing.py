"""Lists in messages: the first few items, then how many more."""

from __future__ import annotations

from collections.abc import Sequence


def listed(items: Sequence[str], shown: int = 3, sep: str = ", ") -> str:
    """``items`` joined by ``sep``: the first ``shown``, then " and N more"."""
    more = len(items) - shown
    return sep.join(items[:shown]) + (f" and {more} more" if more > 0 else "")
