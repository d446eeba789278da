"""``rag`` (Vanilla RAG): the top-5 past turns by similarity of their user query to the
current one, put back in chronological order, plus the top-10 repository functions."""

from __future__ import annotations

import asyncio

import numpy as np

from memory.backends._verbatim import VerbatimTurns
from memory.backends.base import (
    BackendEnv,
    Digest,
    newest_that_fit,
    repo_sections,
    split_budget,
    turn_sections,
)
from memory.index.embed import cosine, top_k
from memory.types import ContextPack, Section, Turn

TOP_TURNS = 5


class RagBackend(VerbatimTurns):  # steering: a past turn is forgotten whole, not edited
    name = "rag"

    def __init__(self, env: BackendEnv, top: int = TOP_TURNS) -> None:
        self.env = env
        self.top = int(env.options.get("rag_top", top))  # type: ignore[call-overload]
        self._turns: list[list[Section]] = []
        self._vectors = np.zeros((0, env.embedder.dim), dtype=np.float32)
        self._digest = Digest()

    def selected(self, query_vector: np.ndarray) -> list[int]:
        """Indices of the ``top`` most similar past turns, in chronological order."""
        if not self._turns:
            return []
        best = top_k(cosine(query_vector, self._vectors), self.top)
        return sorted(int(i) for i in best)

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        picked: list[list[Section]] = []
        if self._turns:
            vector = (await asyncio.to_thread(self.env.embedder.embed, [query]))[0]
            picked = [self._turns[i] for i in self.selected(vector)]
        history = newest_that_fit(picked, budget - sum(s.tokens for s in repo))
        return ContextPack(query, [*history, *repo], self.env.count(query))

    async def observe(self, turn: Turn) -> None:
        await self.observe_many([turn])

    async def observe_many(self, turns: list[Turn]) -> None:
        """Catch up on many turns with one embedding batch."""
        if not turns:
            return
        vectors = await asyncio.to_thread(self.env.embedder.embed, [t.user for t in turns])
        self._vectors = np.vstack([self._vectors, vectors]).astype(np.float32)
        for turn in turns:
            self._turns.append(turn_sections(turn, self.env.count))
            self._digest.update(turn.index, turn.user, turn.assistant)

    def _forgotten(self, number: int) -> None:
        self._vectors = np.delete(self._vectors, number, axis=0)

    def state_digest(self) -> str:
        return self._digest.value
