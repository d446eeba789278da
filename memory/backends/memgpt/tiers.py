"""MemGPT's memory tiers and the functions that reach them (used by backend.py).

Core memory: labelled blocks shown in the main context, edited by
``core_memory_append`` / ``core_memory_replace``, each at most 2,000 characters
(MemGPT's ``CORE_MEMORY_PERSONA_CHAR_LIMIT`` / ``CORE_MEMORY_HUMAN_CHAR_LIMIT``).
Recall storage: every message, searched by ``conversation_search`` (case-insensitive
text match, as MemGPT's recall search), newest first. Archival storage: passages in
LanceDB, searched by embedding similarity (``archival_memory_search``). Both searches
are paginated, 5 results a page (``RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE``).

``Functions`` runs the calls of one answer on a scratch copy: core blocks copied,
archival inserts held aside (searchable at once), the stores only read. The backend
applies the calls of a committed turn to its real state (``apply``); an answer that is
never committed leaves nothing behind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.acting.toolloop import Tool, ToolResult
from memory.backends._memstore import MemoryStore
from memory.backends._topics import terms
from memory.backends.mem0 import statements
from memory.index.embed import cosine

BLOCK_LIMIT = 2000  # characters per core memory block
PAGE_SIZE = 5
MAX_PAGES = 10  # pages a constrained model may ask for
BLOCKS = ("developer", "task")
BLOCK_PURPOSE = {"developer": "who the developer is, their preferences and conventions",
                 "task": "the current task: requirements, decisions and their revisions"}
EDITS = ("core_memory_append", "core_memory_replace", "archival_memory_insert")


class FunctionError(ValueError):
    """A call the model made that cannot be carried out (told to the model, as MemGPT)."""


@dataclass(frozen=True)
class Message:
    turn: int
    role: str  # "developer" | "assistant"
    text: str
    tokens: int = 0


@dataclass
class CoreMemory:
    blocks: dict[str, str] = field(default_factory=lambda: dict.fromkeys(BLOCKS, ""))
    limit: int = BLOCK_LIMIT

    def copy(self) -> CoreMemory:
        return CoreMemory(dict(self.blocks), self.limit)

    def _check(self, label: str, text: str) -> None:
        if label not in self.blocks:
            raise FunctionError(f"no core memory block {label!r}; blocks: {', '.join(self.blocks)}")
        if len(text) > self.limit:
            raise FunctionError(f"block {label!r} would hold {len(text)} characters, over its "
                                f"limit of {self.limit}; replace or shorten its content first")

    def append(self, label: str, content: str) -> str:
        new = f"{self.blocks.get(label, '')}\n{content}".strip()
        self._check(label, new)
        self.blocks[label] = new
        return new

    def replace(self, label: str, old: str, new: str) -> str:
        self._check(label, "")
        if not old or old not in self.blocks[label]:
            raise FunctionError(f"{old!r} is not in block {label!r}")
        text = self.blocks[label].replace(old, new).strip()
        self._check(label, text)
        self.blocks[label] = text
        return text

    def render(self, label: str) -> str:
        text = self.blocks[label]
        return f"<{label} characters={len(text)}/{self.limit}>\n{text}\n</{label}>"


def page_of(found: list[str], page: int, what: str) -> str:
    """MemGPT's paginated answer: one page of results and how many there are."""
    if not found:
        return f"No {what} found."
    pages = math.ceil(len(found) / PAGE_SIZE)
    if page >= pages:
        return f"Page {page} is past the last page ({pages - 1}) of {len(found)} {what}."
    start = page * PAGE_SIZE
    shown = found[start:start + PAGE_SIZE]
    lines = [f"Showing {start + 1}-{start + len(shown)} of {len(found)} {what} "
             f"(page {page} of {pages - 1}):"]
    return "\n".join([*lines, *(f"- {s}" for s in shown)])


def search_recall(messages: list[Message], query: str) -> list[str]:
    needle = " ".join(query.split()).casefold()
    hits = [m for m in messages if needle and needle in " ".join(m.text.split()).casefold()]
    return [f"[turn {m.turn}, {m.role}] {m.text}" for m in reversed(hits)]


class Functions:
    """The functions one answer may call (a ``Toolbox``), over a scratch copy."""

    def __init__(self, core: CoreMemory, recall: list[Message], archival: MemoryStore,
                 embed: Any, query: str, constrained: bool) -> None:
        self.core = core.copy()
        self.recall = recall
        self.archival = archival
        self.embed = embed  # list[str] -> np.ndarray
        self.query = query
        self.constrained = constrained
        self.inserted: list[tuple[str, np.ndarray]] = []  # archival inserts of this answer

    # -- the schemas ----------------------------------------------------------------------
    def _text(self, choices: list[str]) -> dict[str, Any] | None:
        """A free string; under constrained decoding one of ``choices`` (None: none)."""
        if not self.constrained:
            return {"type": "string", "minLength": 1}
        return {"type": "string", "enum": choices} if choices else None

    def tools(self) -> list[Tool]:
        said = statements(self.query)
        words = terms(self.query, 12)
        labels = {"type": "string", "enum": list(self.core.blocks)}
        page: dict[str, Any] = ({"type": "integer", "enum": list(range(MAX_PAGES))}
                                if self.constrained else {"type": "integer", "minimum": 0})
        lines = [line for text in self.core.blocks.values() for line in text.splitlines()
                 if line.strip()]
        stored = {text for text, _ in self.inserted}
        # a constrained model is offered what its memory does not hold yet
        content, query = self._text(said), self._text(words)
        append = self._text([s for s in said if s not in lines])
        insert = self._text([s for s in said if s not in stored])
        old = self._text(lines)
        tools = []
        if append is not None:
            tools.append(Tool("core_memory_append", "add a line to a core memory block "
                              f"({'; '.join(f'{b}: {p}' for b, p in BLOCK_PURPOSE.items())}).",
                              {"label": labels, "content": append}))
        if content is not None and old is not None:
            tools.append(Tool("core_memory_replace", "replace old_content in a core memory "
                              "block by new_content (an empty new_content deletes it).",
                              {"label": labels, "old_content": old,
                               "new_content": ({"type": "string", "enum": [*said, ""]}
                                               if self.constrained else {"type": "string"})}))
        if insert is not None:
            tools.append(Tool("archival_memory_insert", "store a passage in archival memory "
                              "(unlimited, searched by meaning).", {"content": insert}))
        if query is not None:
            tools.append(Tool("archival_memory_search", "search archival memory by meaning; "
                              f"{PAGE_SIZE} results a page, page 0 first.",
                              {"query": query, "page": page}))
            tools.append(Tool("conversation_search", "search every past message of this "
                              f"conversation for a text; {PAGE_SIZE} results a page, newest "
                              "first.", {"query": query, "page": page}))
        return tools

    # -- the calls ------------------------------------------------------------------------
    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        try:
            return ToolResult(await self._run(name, args))
        except FunctionError as exc:
            return ToolResult(f"Error: {exc}", ok=False)

    async def _run(self, name: str, args: dict[str, Any]) -> str:
        if name == "core_memory_append":
            self.core.append(str(args["label"]), str(args["content"]).strip())
            return f"Appended. {self.core.render(str(args['label']))}"
        if name == "core_memory_replace":
            label = str(args["label"])
            self.core.replace(label, str(args["old_content"]), str(args["new_content"]).strip())
            return f"Replaced. {self.core.render(label)}"
        if name == "archival_memory_insert":
            text = str(args["content"]).strip()
            if not text:
                raise FunctionError("nothing to insert")
            self.inserted.append((text, self.embed([text])[0]))
            return "Inserted into archival memory."
        page = max(0, int(args.get("page", 0)))
        if name == "archival_memory_search":
            return page_of(self.search_archival(str(args["query"])), page, "archival passages")
        if name == "conversation_search":
            return page_of(search_recall(self.recall, str(args["query"])), page,
                           "past messages")
        raise FunctionError(f"no function {name!r}")

    def search_archival(self, query: str) -> list[str]:
        if not query.strip():
            raise FunctionError("empty query")
        total = len(self.archival) + len(self.inserted)
        if not total:
            return []
        vector = self.embed([query])[0]
        scored = [(m.text, score) for m, score in self.archival.similar(vector, len(self.archival))]
        if self.inserted:
            sims = cosine(vector, np.stack([v for _, v in self.inserted]))
            scored += [(text, float(s)) for (text, _), s in zip(self.inserted, sims, strict=True)]
        return [text for text, _ in sorted(scored, key=lambda p: -p[1])]
