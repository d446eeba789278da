"""``memgpt`` (Packer et al., 2023, MemGPT): an LLM that manages its own memory tiers.

Main context = the MemGPT instructions + working context (core memory blocks
``developer`` and ``task``, editable by the model) + a FIFO queue of recent messages
headed by a recursive summary of the evicted ones. When the main context passes 0.75
of its limit (MemGPT's ``MESSAGE_SUMMARY_WARNING_FRAC``) a memory-pressure warning
joins it, telling the model to save what matters; when it passes the limit, the queue
manager evicts the oldest half of the queue's messages (the paper's flush; whole turns,
the last 3 messages kept: ``MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST``) and the LLM rewrites
the summary from the previous one and the evicted messages. Every message also goes to
recall storage; archival storage is LanceDB passages. Both are reached only through
the model's function calls in the Agent's tool loop (memory/acting/toolloop.py):
core_memory_append, core_memory_replace, archival_memory_insert, archival_memory_search,
conversation_search, paginated, chained by ``request_heartbeat``.

The calls of an answer run on a scratch copy (memory/backends/memgpt/tiers.py) and are noted
in the turn (``meta["tools"]``); ``observe`` applies the edits of a committed turn. An
answer that is never committed (``commit=False``, the losing A/B answer) leaves nothing.

In engram the main context's limit is a share of the window (0.6: repository code and
the answer take the rest). Options (``BackendEnv.options``): ``memgpt_window`` (tokens;
0: that share of the model's window), ``memgpt_warning`` (0.75), ``memgpt_flush`` (0.5),
``memgpt_block_limit`` (2000 characters).
"""

from __future__ import annotations

import asyncio
import math
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.backends._journal import Journal
from memory.backends._memstore import MemoryStore
from memory.backends.base import BackendEnv, Digest, newest_that_fit, repo_sections, split_budget
from memory.backends.mem0 import statements
from memory.backends.memgpt.tiers import (
    BLOCK_LIMIT,
    BLOCK_PURPOSE,
    EDITS,
    CoreMemory,
    FunctionError,
    Functions,
    Message,
)
from memory.llm.client import LLMError
from memory.store import Store
from memory.types import ContextPack, Section, Turn

WARNING = 0.75  # MESSAGE_SUMMARY_WARNING_FRAC
FLUSH = 0.5  # share of the queue's messages evicted on overflow
KEEP_LAST = 3  # MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST: messages never evicted
MAIN_SHARE = 0.6  # of the model's window: the main context's limit in engram
CLIP = 1500  # characters of each evicted message shown to the summariser
SUMMARY_TOKENS = 400
MAX_SUMMARY_LINES = 12

INSTRUCTIONS = """You are a MemGPT agent: your memory has tiers and you manage it yourself.
- Core memory (below, always in view): blocks you edit with core_memory_append and
  core_memory_replace. {blocks}. Keep them short and current: when a requirement is
  revised, replace the old line.
- The recent messages of the conversation are in view; older ones were evicted and are
  summarised. {recall} past messages are in recall storage: find them with
  conversation_search.
- Archival storage holds {archival} passages you saved: add with archival_memory_insert,
  find with archival_memory_search.
Save what the developer tells you that will matter later (requirements, decisions,
conventions) before it leaves your view."""

PRESSURE_WARNING = ("Memory pressure warning: the conversation history will soon reach its "
                    "maximum length and its oldest messages will be evicted. Save anything "
                    "important from them to core or archival memory now.")

SUMMARY_PROMPT = """You keep the recursive summary of a conversation between a developer and
a coding assistant. The oldest messages are being evicted from the assistant's view; the
new summary replaces the previous summary and those messages, so fold both into it. Keep
the developer's requirements, decisions, revisions (only the latest version) and the code
written, naming files and functions; drop small talk."""
# {"summary": str}; under constrained decoding {"summary": [one of the lines offered]}


@dataclass(frozen=True)
class MemGPTConfig:
    window: int = 0  # main context's limit in tokens (0: MAIN_SHARE of the model's window)
    warning: float = WARNING
    flush: float = FLUSH
    block_limit: int = BLOCK_LIMIT

    @classmethod
    def from_options(cls, options: dict[str, object]) -> MemGPTConfig:
        def get(key: str, default: float) -> float:
            return float(options.get(key, default))  # type: ignore[arg-type]

        return cls(window=int(get("memgpt_window", 0)), warning=get("memgpt_warning", WARNING),
                   flush=get("memgpt_flush", FLUSH),
                   block_limit=int(get("memgpt_block_limit", BLOCK_LIMIT)))


def summary_schema(candidates: list[str] | None) -> dict[str, Any]:
    """A free summary; under constrained decoding, lines chosen among ``candidates``."""
    summary: dict[str, Any] = {"type": "string", "minLength": 1}
    if candidates is not None:
        summary = {"type": "array", "minItems": 1,
                   "maxItems": min(MAX_SUMMARY_LINES, len(candidates)),
                   "items": {"type": "string", "enum": candidates}}
    return {"type": "object", "properties": {"summary": summary}, "required": ["summary"],
            "additionalProperties": False}


class MemGPTBackend:
    name = "memgpt"

    def __init__(self, env: BackendEnv, config: MemGPTConfig | None = None) -> None:
        if env.data_dir is None:
            raise ValueError(f"the {self.name} backend needs a data dir for its archival store")
        self.env = env
        self.config = config or MemGPTConfig.from_options(env.options)
        self.core = CoreMemory(limit=self.config.block_limit)
        self.queue: list[Message] = []  # the FIFO queue in the main context
        self.recall: list[Message] = []  # every message
        self.summary = ""  # recursive summary of the evicted messages
        self.evicted = 0
        self.warned = False  # a pressure warning is in the main context
        # a scope per instance: the memory is rebuilt from the turns on a switch or resume
        scope = f"{self.name}:{env.session_id or 'default'}:{uuid.uuid4().hex[:8]}"
        self.archival = MemoryStore(Store(env.store_location()), scope,
                                    env.embedder.dim)
        self.journal = Journal(self.name)
        self._digest = Digest()

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.env.embedder.embed(texts), dtype=np.float32)

    # -- main context ---------------------------------------------------------------------
    def limit(self) -> int:
        return self.config.window or int(self.env.llm.context_window() * MAIN_SHARE)

    def instructions(self) -> str:
        blocks = "; ".join(f"{b}: {p}" for b, p in BLOCK_PURPOSE.items())
        return INSTRUCTIONS.format(blocks=blocks, recall=len(self.recall) - len(self.queue),
                                   archival=len(self.archival))

    def fixed_sections(self) -> list[Section]:
        """Instructions, core blocks, summary and warning: the main context but the queue."""
        parts = [("system", "memgpt:instructions", self.instructions())]
        parts += [("memory", f"core:{label}", self.core.render(label))
                  for label in self.core.blocks]
        if self.summary:
            parts.append(("memory", "summary", f"Summary of the {self.evicted} evicted "
                                               f"messages:\n{self.summary}"))
        if self.warned:
            parts.append(("memory", "warning", PRESSURE_WARNING))
        return [Section(kind, source, text, self.env.count(text))  # type: ignore[arg-type]
                for kind, source, text in parts]

    def queue_groups(self) -> list[list[Section]]:
        groups: dict[int, list[Section]] = {}
        for m in self.queue:
            role = "user" if m.role == "developer" else "assistant"
            groups.setdefault(m.turn, []).append(
                Section("history", f"turn:{m.turn}", m.text, m.tokens, role=role))
        return list(groups.values())

    def main_tokens(self) -> int:
        return (sum(s.tokens for s in self.fixed_sections())
                + sum(m.tokens for m in self.queue))

    # -- the model's functions ---------------------------------------------------------------
    def toolbox(self, query: str) -> Functions:
        """The functions of one answer, over a scratch copy of the memory."""
        return Functions(self.core, self.recall, self.archival, self._embed, query,
                         self.env.llm.constrained())

    async def _apply(self, turn: Turn) -> None:
        """Carry out the memory edits the model made while answering ``turn``."""
        calls = (turn.meta.get("tools") or {}).get("calls") or []
        for call in calls:
            name, args = call.get("function"), call.get("args") or {}
            if name not in EDITS or not call.get("ok"):
                continue
            try:
                if name == "core_memory_append":
                    label = str(args["label"])
                    text = self.core.append(label, str(args["content"]).strip())
                    self.journal.op("APPEND", label, text)
                elif name == "core_memory_replace":
                    label = str(args["label"])
                    text = self.core.replace(label, str(args["old_content"]),
                                             str(args["new_content"]).strip())
                    self.journal.op("REPLACE", label, text)
                else:
                    content = str(args["content"]).strip()
                    vector = (await asyncio.to_thread(self._embed, [content]))[0]
                    memory, _ = self.archival.add(content, [], vector, turn.index)
                    self.journal.op("INSERT", memory.id, content)
                    text = content
            except (FunctionError, KeyError) as exc:
                self.journal.skip(f"turn {turn.index}: {name} not applied: {exc}")
                continue
            self._digest.update("apply", name, args.get("label", ""), text)

    # -- observe ------------------------------------------------------------------------
    async def observe(self, turn: Turn) -> None:
        if turn.backend == self.name:
            await self._apply(turn)
        for role, text in (("developer", turn.user), ("assistant", turn.assistant)):
            message = Message(turn.index, role, text, self.env.count(text))
            self.recall.append(message)
            self.queue.append(message)
        self._digest.update("turn", turn.index, turn.user, turn.assistant)
        tokens, limit = self.main_tokens(), self.limit()
        if tokens > limit:
            await self.flush()
        elif tokens > limit * self.config.warning and not self.warned:
            self.warned = True
            self._digest.update("warning", turn.index)
            self.journal.op("WARNING", "pressure", f"main context at {tokens} of {limit} tokens")

    def to_evict(self) -> int:
        """How many of the oldest queue messages a flush evicts: the flush share, rounded
        up to whole turns, never the last ``KEEP_LAST``."""
        most = len(self.queue) - KEEP_LAST
        n = min(most, math.ceil(len(self.queue) * self.config.flush))
        while 0 < n < most and self.queue[n].turn == self.queue[n - 1].turn:
            n += 1
        while 0 < n < len(self.queue) and self.queue[n].turn == self.queue[n - 1].turn:
            n -= 1  # the last KEEP_LAST split a turn: keep it whole
        return max(0, n)

    async def flush(self) -> bool:
        """Evict the oldest messages into recall storage and rewrite the summary."""
        n = self.to_evict()
        if n <= 0:
            return False
        evicted = self.queue[:n]
        try:
            summary = await self._summarize(evicted)
        except LLMError as exc:
            self.journal.skip(f"eviction of {n} messages skipped (kept in the queue): {exc}")
            return False
        self.summary = summary
        self.queue = self.queue[n:]
        self.evicted += n
        self.warned = False
        self._digest.update("flush", n, summary)
        self.journal.op("SUMMARIZE", f"summary:{self.evicted}", summary)
        return True

    async def _summarize(self, evicted: list[Message]) -> str:
        shown = "\n".join(f"[turn {m.turn}] {m.role}: {m.text[:CLIP]}" for m in evicted)
        user = (f"Previous summary:\n{self.summary or '(none yet)'}\n\n"
                f"Messages being evicted:\n{shown}\n\nNew summary:")
        candidates = None
        if self.env.llm.constrained():
            candidates = list(dict.fromkeys(
                [*(line for line in self.summary.splitlines() if line.strip()),
                 *(s for m in evicted if m.role == "developer" for s in statements(m.text))]))
            if not candidates:
                return self.summary
        data = await self.env.llm.ask_json(SUMMARY_PROMPT, user, summary_schema(candidates),
                                           name="summary", max_tokens=SUMMARY_TOKENS)
        value = data["summary"]
        return ("\n".join(value) if isinstance(value, list) else str(value)).strip()

    def drain_records(self) -> list[dict[str, Any]]:
        return self.journal.drain()

    # -- context --------------------------------------------------------------------------
    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        fixed = self.fixed_sections()
        left = budget - sum(s.tokens for s in repo) - sum(s.tokens for s in fixed)
        queue = newest_that_fit(self.queue_groups(), left)
        return ContextPack(query, [*fixed, *queue, *repo], self.env.count(query))

    def state_digest(self) -> str:
        return self._digest.value
