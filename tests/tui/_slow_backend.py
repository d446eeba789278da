"""A scripted backend for the app's tests: learning a turn takes ``DELAY`` seconds (a slow
catch-up), and every update is reported as skipped (memory that silently does nothing)."""

from __future__ import annotations

import asyncio
from typing import Any

from memory.backends.base import BackendEnv, repo_sections
from memory.types import ContextPack, Turn

DELAY = 0.5


class SlowBackend:
    name = "slow"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self.seen: list[int] = []
        self._pending: list[dict[str, Any]] = []

    async def context(self, query: str, *, budget: int) -> ContextPack:
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
