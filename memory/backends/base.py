"""The Backend protocol, the environment backends are built with, shared helpers.

A backend decides what the model sees. ``context`` must not change its state:
a query asked with ``commit=False`` (replay task queries, A/B shadow answers)
only calls ``context``, and ``state_digest()`` must read the same before and
after. Only ``observe`` (called after a committed turn) may change state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from memory.fences import fenced
from memory.types import ContextPack, Section, Turn

if TYPE_CHECKING:
    from memory.index.embed import Embedder
    from memory.index.repo import RepoIndex
    from memory.llm.client import LLM

REPO_FUNCTIONS = 10  # LoCoEval's repository adaptation: top-10 similar functions
REPO_SHARE = 0.35  # at most this share of the budget goes to repository code


@runtime_checkable
class Backend(Protocol):
    """What every memory backend provides."""

    name: str

    async def context(self, query: str, *, budget: int) -> ContextPack:
        """The sections to show the model for ``query``, within ``budget``; no side effects."""
        ...

    async def observe(self, turn: Turn) -> None:
        """Learn from a committed turn (may call the LLM)."""
        ...

    def state_digest(self) -> str:
        """Changes if and only if the backend's memory state changed."""
        ...


@dataclass
class BackendEnv:
    """What a backend is built with. ``repo`` may be None (no repository adaptation)."""

    llm: LLM
    embedder: Embedder
    repo: RepoIndex | None = None
    data_dir: Path | None = None  # where a persistent backend keeps its store
    store_uri: str = ""  # else there: a shared path or object-store URI (replay --store-uri)
    session_id: str = ""
    repo_k: int = REPO_FUNCTIONS
    options: dict[str, object] = field(default_factory=dict)

    def count(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def store_location(self) -> Path | str:
        """Where a persistent backend's LanceDB lives: ``store_uri`` when one is given
        (a path or URI every replay worker can reach), else ``data_dir/index.lance``."""
        if self.store_uri:
            return self.store_uri.rstrip("/") + "/index.lance"
        if self.data_dir is None:
            raise ValueError("this backend keeps a store: it needs a data dir")
        return self.data_dir / "index.lance"


class Digest:
    """A running hash: each change of state is folded in, so equal histories hash equal."""

    def __init__(self) -> None:
        self._value = hashlib.sha256(b"engram").hexdigest()

    def update(self, *parts: object) -> None:
        h = hashlib.sha256(self._value.encode())
        for part in parts:
            h.update(b"\0" + str(part).encode("utf-8", "replace"))
        self._value = h.hexdigest()

    @property
    def value(self) -> str:
        return self._value


def turn_sections(turn: Turn, count: Callable[[str], int]) -> list[Section]:
    """A past turn as the two history sections (user, assistant) the model sees."""
    source = f"turn:{turn.index}"
    return [
        Section("history", source, turn.user, count(turn.user), role="user"),
        Section("history", source, turn.assistant, count(turn.assistant), role="assistant"),
    ]


def exchange(turn: Turn, limit: int) -> str:
    """A turn as the memory prompts show it, each side cut to ``limit`` characters."""
    def clip(text: str) -> str:
        return text if len(text) <= limit else text[:limit] + " [...]"

    return f"Developer: {clip(turn.user)}\nAssistant: {clip(turn.assistant)}"


def render_chunk(location: str, code: str) -> str:
    return f"# {location}\n{fenced(code, 'python')}"


def repo_sections(env: BackendEnv, query: str, budget: int) -> list[Section]:
    """The top-k repository functions for ``query``, most similar first, within ``budget``."""
    if env.repo is None or env.repo_k <= 0 or budget <= 0:
        return []
    sections: list[Section] = []
    used = 0
    for hit in env.repo.functions(query, env.repo_k):
        text = render_chunk(hit.chunk.location, hit.chunk.code)
        tokens = env.count(text)
        if used + tokens > budget:
            continue
        sections.append(Section("repo", hit.chunk.location, text, tokens))
        used += tokens
    return sections


def newest_that_fit(groups: Iterable[list[Section]], budget: int) -> list[Section]:
    """Keep whole groups (turns) from the newest back while they fit; return in original order."""
    kept: list[list[Section]] = []
    used = 0
    for group in reversed(list(groups)):
        tokens = sum(s.tokens for s in group)
        if used + tokens > budget:
            break
        kept.append(group)
        used += tokens
    return [s for group in reversed(kept) for s in group]


def split_budget(budget: int, share: float = REPO_SHARE) -> int:
    """The repository code's part of a budget."""
    return max(0, int(budget * share))
