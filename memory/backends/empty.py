"""``empty``: no memory at all, only the query and the top-10 repository functions.

The lower bound every other backend is normalised against.
"""

from __future__ import annotations

from memory.backends.base import BackendEnv, repo_sections
from memory.types import ContextPack, Turn


class EmptyBackend:
    name = "empty"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env

    async def context(self, query: str, *, budget: int) -> ContextPack:
        return ContextPack(query, repo_sections(self.env, query, budget), self.env.count(query))

    async def observe(self, turn: Turn) -> None:
        return None

    def state_digest(self) -> str:
        return "empty"
