"""``full``: the whole history; over the window, the oldest turns are dropped whole."""

from __future__ import annotations

from memory.backends.base import (
    BackendEnv,
    Digest,
    newest_that_fit,
    repo_sections,
    split_budget,
    turn_sections,
)
from memory.turn.steering import MemoryItem, SteeringUnsupported
from memory.types import ContextPack, Section, Turn


class FullBackend:
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

    # -- steering (memory/turn/steering.py): a past turn can be forgotten, not edited ----------
    def memory_items(self) -> list[MemoryItem]:
        return [MemoryItem(group[0].source, group[0].text, editable=False)
                for group in self._turns]

    async def forget(self, memory_id: str) -> str:
        number = next((i for i, group in enumerate(self._turns)
                       if group[0].source == memory_id), None)
        if number is None:
            raise KeyError(memory_id)
        group = self._turns.pop(number)
        self._digest.update("forget", memory_id)
        return group[0].text

    async def edit(self, memory_id: str, text: str) -> str:
        raise SteeringUnsupported(
            f"{self.name} keeps past turns verbatim: a turn can be forgotten (d), not edited")

    def state_digest(self) -> str:
        return self._digest.value
