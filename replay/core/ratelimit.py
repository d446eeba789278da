"""Requests per window per model, held across every call of a run (``--rpm``).

One ``RateLimiter`` hands out start times: a call may start once fewer than ``limit``
calls of its model started in the last ``window`` seconds. The local executor keeps
one in the process; the Ray executor keeps one in a Ray actor that every worker asks,
so the limit holds for the cluster, not per worker. A 429 that still comes (another
client on the same key) is retried with backoff by ``memory.llm.client`` as always.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RateLimits:
    """``per_model``: calls per window for a model; ``default``: for any other model
    (None: unlimited)."""

    per_model: dict[str, int] = field(default_factory=dict)
    default: int | None = None
    window: float = 60.0

    def limit(self, model: str) -> int | None:
        return self.per_model.get(model, self.default)

    def __bool__(self) -> bool:
        return bool(self.per_model) or self.default is not None


def parse_rpm(values: list[str]) -> RateLimits:
    """``--rpm N`` (every model) and ``--rpm MODEL=N`` (one model), repeatable."""
    per: dict[str, int] = {}
    default = None
    for value in values:
        model, sep, number = value.rpartition("=")
        try:
            n = int(number)
        except ValueError:
            msg = f"--rpm {value!r}: expected N or MODEL=N (calls per minute)"
            raise ValueError(msg) from None
        if n < 1:
            raise ValueError(f"--rpm {value!r}: the limit must be at least 1")
        if sep:
            per[model] = n
        else:
            default = n
    return RateLimits(per, default)


class RateLimiter:
    """A sliding window of reserved start times per model."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self._starts: dict[str, deque[float]] = {}

    def reserve(self, model: str, now: float | None = None) -> float:
        """Reserve the earliest start for a call of ``model``; the seconds to wait for it."""
        limit = self.limits.limit(model)
        if limit is None:
            return 0.0
        now = time.time() if now is None else now
        starts = self._starts.setdefault(model, deque())
        start = now
        if len(starts) >= limit:
            start = max(now, starts[-limit] + self.limits.window)
        starts.append(start)
        while len(starts) > limit and starts[0] <= now - self.limits.window:
            starts.popleft()
        return start - now

    async def wait(self, model: str) -> None:
        """The rate gate of ``memory.llm.client`` in one process."""
        delay = self.reserve(model)
        if delay > 0:
            await asyncio.sleep(delay)
