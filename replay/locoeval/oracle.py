"""``oracle`` (replay only): the ground-truth information items of an outline and the code
of their linked locations — the upper bound the normalized score is measured against.

Its outline is the one the run voiced (``replay.locoeval.voice``): it shows the true items
as the mock user said them, a memory that kept every word said and nothing stale."""

from __future__ import annotations

from memory.backends.base import BackendEnv, render_chunk
from memory.index.repo import LocationRefused
from memory.types import ContextPack, Section, Turn
from replay.locoeval.outline import Outline


class OracleBackend:
    name = "oracle"

    def __init__(self, env: BackendEnv, outline: Outline) -> None:
        self.env = env
        self.outline = outline

    def _sections(self) -> list[Section]:
        sections: list[Section] = []
        seen: set[str] = set()
        for sample in self.outline.samples:
            for item in sample.items:
                if not item.truth:
                    continue
                sections.append(Section("memory", item.id, f"- {item.text}",
                                        self.env.count(f"- {item.text}")))
                for location in item.locations:
                    if self.env.repo is None:
                        break
                    try:
                        found = self.env.repo.locate(location)
                    except LocationRefused:
                        continue
                    if found is None or found.chunk.location in seen:
                        continue
                    seen.add(found.chunk.location)
                    text = render_chunk(found.chunk.location, found.chunk.code)
                    sections.append(Section("repo", found.chunk.location, text,
                                            self.env.count(text)))
        return sections

    async def context(self, query: str, *, budget: int) -> ContextPack:
        kept, used = [], 0
        for section in self._sections():
            if used + section.tokens <= budget:
                kept.append(section)
                used += section.tokens
        return ContextPack(query, kept, self.env.count(query))

    async def observe(self, turn: Turn) -> None:
        return None  # the ground truth does not change with the conversation

    def state_digest(self) -> str:
        return f"oracle:{self.outline.id}"
