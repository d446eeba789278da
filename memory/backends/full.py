"""``full``: the whole history; over the window, the oldest turns are dropped whole."""

from __future__ import annotations

from memory.backends._verbatim import VerbatimTurns
from memory.backends.base import (
    BackendEnv,
    Digest,
    newest_that_fit,
    repo_sections,
    split_budget,
    turn_sections,
)
from memory.types import ContextPack, Section, Turn


class FullBackend(VerbatimTurns):  # steering: a past turn is forgotten whole, not edited
    name = "full"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self._turns: list[list[Section]] = []
        self._digest = Digest()

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        history = newest_that_fit(self._turns, budget - sum(s.tokens for s in repo))
        return ContextPack(query, [*history, *repo], self.env.count(query))

    async def observe(self, turn: Turn) -> None:
        self._turns.append(turn_sections(turn, self.env.count))
        self._digest.update(turn.index, turn.user, turn.assistant)

    def state_digest(self) -> str:
        return self._digest.value
