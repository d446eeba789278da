"""A scripted backend for the app's tests: learning a turn takes ``DELAY`` seconds (a slow
catch-up), and every update is reported as skipped (memory that silently does nothing).
While ``HOLD`` is cleared, building a context waits for it: a test keeps an answer in
flight for as long as it needs to look at the app meanwhile."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from memory.backends.base import BackendEnv, repo_sections
from memory.types import ContextPack, Turn

DELAY = 0.5
HOLD = threading.Event()
HOLD.set()


class SlowBackend:
    name = "slow"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self.seen: list[int] = []
        self._pending: list[dict[str, Any]] = []

    async def context(self, query: str, *, budget: int) -> ContextPack:
        if not HOLD.is_set():
            await asyncio.to_thread(HOLD.wait, 60)
        return ContextPack(query, repo_sections(self.env, query, budget), self.env.count(query))

    async def observe(self, turn: Turn) -> None:
        await asyncio.sleep(DELAY)
        self.seen.append(turn.index)
        self._pending.append({"type": "memory", "backend": self.name, "op": "skipped",
                              "id": "", "text": f"no facts found in turn {turn.index}"})

    def drain_records(self) -> list[dict[str, Any]]:
        records, self._pending = self._pending, []
        return records

    def state_digest(self) -> str:
        return f"slow:{len(self.seen)}"
