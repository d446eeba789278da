"""``mem0``: the classic Mem0 algorithm (extract facts, then ADD/UPDATE/DELETE/NOOP).

After each committed turn one LLM call extracts salient facts; each fact fetches
its most similar stored memories; one more LLM call, seeing those memories under
small integer ids, decides an operation per fact. Memories and their event
history live in LanceDB. On a query: the top-k memories by similarity and the
top-10 repository functions. Own prompts; memory calls count as ``memory`` usage.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.backends._memstore import Memory, MemoryStore
from memory.backends.base import BackendEnv, exchange, repo_sections, split_budget
from memory.llm.client import LLMError
from memory.llm.lenient_json import MalformedJSON
from memory.store import Store
from memory.turn.steering import MemoryItem
from memory.types import ContextPack, Section, Turn

log = logging.getLogger(__name__)

TOP_K = 10  # memories shown on a query
SIMILAR = 10  # existing memories retrieved per new fact
RELATED = 0.5  # cosine from which a memory may be updated or deleted by a fact
OPS = ("ADD", "UPDATE", "DELETE", "NOOP")

MAX_FACTS = 5  # facts extracted per turn, at most

EXTRACT_PROMPT = """You keep the long-term memory of a coding assistant.
Read one exchange between a developer and the assistant and list the facts worth
remembering for later turns: requirements and their revisions, decisions,
constraints, preferences and conventions, and facts about the repository (files,
functions, behaviour). One short sentence per fact, copied or condensed from the
developer's words. Never repeat a fact. Skip greetings and small talk.

Example.
Developer: parse_date in utils/dates.py must return UTC datetimes. Also, we log with
the logging module, never print.
Assistant: Understood.
Answer: {"facts": ["parse_date in utils/dates.py must return UTC datetimes.",
"The project logs with the logging module, never print."]}

Nothing worth remembering: {"facts": []}"""
# {"facts": ["short sentence", ...]}
EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "maxItems": MAX_FACTS,
                             "items": {"type": "string", "minLength": 3, "maxLength": 300}}},
    "required": ["facts"], "additionalProperties": False,
}

UPDATE_PROMPT = """You keep a coding assistant's memory consistent.
Below are existing memories and new facts, each with a number.
For every new fact choose one operation:
- ADD: the fact is new information. Add it.
- UPDATE: the fact revises, refines or extends existing memory M (same subject,
  newer or fuller). Give the merged text, keeping what still holds.
- DELETE: the fact says existing memory M is wrong or no longer holds. M is removed.
- NOOP: the fact is already known. Nothing changes.
"memory" is the number of the existing memory for UPDATE and DELETE, else -1;
"text" is the merged text for UPDATE, else "".

Example.
Existing memories:
0: Dates are stored in local time.
New facts:
0: The CLI is called engram.
1: Dates must be stored in UTC.
Answer: {"operations": [{"fact": 0, "op": "ADD", "memory": -1, "text": ""},
{"fact": 1, "op": "UPDATE", "memory": 0, "text": "Dates must be stored in UTC."}]}"""


def _op(fact: int, ops: list[str], memory: dict[str, Any], text: dict[str, Any]
        ) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"fact": {"const": fact}, "op": {"enum": ops},
                           "memory": memory, "text": text},
            "required": ["fact", "op", "memory", "text"], "additionalProperties": False}


def constrained_update_schema(facts: list[str], related: list[list[int]]) -> dict[str, Any]:
    """The update schema for a model decoding under it: one operation per fact, in
    order; ADD/NOOP name no memory; UPDATE/DELETE name one of the shown memories
    related to that fact (``related[i]``: similarity >= RELATED), so a fact with no
    related memory can only be added or dropped; an UPDATE's text is the new fact (a
    small model's own merge is not worth its tokens)."""
    items = []
    for i, text in enumerate(facts):
        variants = [_op(i, ["ADD", "NOOP"], {"const": -1}, {"const": ""})]
        if related[i]:
            shown = {"enum": related[i]}
            variants += [_op(i, ["UPDATE"], shown, {"enum": [text]}),
                         _op(i, ["DELETE"], shown, {"const": ""})]
        items.append({"anyOf": variants})
    return {"type": "object",
            "properties": {"operations": {"type": "array", "prefixItems": items,
                                          "minItems": len(facts), "maxItems": len(facts)}},
            "required": ["operations"], "additionalProperties": False}


def update_schema(facts: int, memories: int) -> dict[str, Any]:
    """{"operations": [{"fact", "op", "memory", "text"}]} for a model that writes freely:
    any integer validates, so an invented number rejects that one operation, not the
    whole answer."""
    fact: dict[str, Any] = {"type": "integer"}
    memory: dict[str, Any] = {"type": "integer"}
    operation = {
        "type": "object",
        "properties": {
            "fact": fact,
            "op": {"type": "string", "enum": list(OPS)},
            "memory": memory,
            "text": {"type": "string", "maxLength": 400},
        },
        "required": ["fact", "op", "memory", "text"], "additionalProperties": False,
    }
    return {"type": "object",
            "properties": {"operations": {"type": "array", "items": operation,
                                          "minItems": 1, "maxItems": facts}},
            "required": ["operations"], "additionalProperties": False}


@dataclass
class Fact:
    text: str
    locations: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """What one observed turn did to memory (kept for the transcript and for tests)."""

    facts: list[Fact] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    skipped: str | None = None


class Mem0Backend:
    name = "mem0"
    persistent = True  # its store survives restarts: a resumed session needs no catch-up

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self.top_k = int(env.options.get("mem0_top_k", TOP_K))  # type: ignore[call-overload]
        shared = bool(env.options.get("shared_memory", False))
        scope = f"{self.name}:{'repo' if shared else env.session_id or 'default'}"
        if env.data_dir is None:
            raise ValueError(f"the {self.name} backend needs a data dir for its store")
        self.memories = MemoryStore(Store(env.store_location()), scope,
                                    env.embedder.dim)
        self.last: Outcome = Outcome()
        self._pending: list[dict[str, Any]] = []

    # -- prompts and parsing (mem0r overrides these) --------------------------------
    extract_prompt = EXTRACT_PROMPT

    def extract_schema(self, turn: Turn) -> dict[str, Any] | None:
        """The extraction schema; under constrained decoding, facts are chosen among the
        developer's own statements (None: there are none, nothing to ask)."""
        if not self.env.llm.constrained():
            return EXTRACT_SCHEMA
        choices = statements(turn.user)
        if not choices:
            return None
        return {"type": "object",
                "properties": {"facts": {"type": "array", "maxItems": min(MAX_FACTS, len(choices)),
                                         "items": {"type": "string", "enum": choices}}},
                "required": ["facts"], "additionalProperties": False}

    def parse_facts(self, data: Any) -> list[Fact]:
        items = data.get("facts", []) if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise MalformedJSON("'facts' is not a list")
        facts = []
        for item in items:
            text = item.get("text", "") if isinstance(item, dict) else item
            if isinstance(text, str | int | float) and str(text).strip():
                facts.append(Fact(str(text).strip()))
        return unique_facts(facts)

    def fact_line(self, fact: Fact) -> str:
        return fact.text

    def memory_line(self, memory: Memory) -> str:
        return memory.text

    # -- observe ------------------------------------------------------------------
    async def extract(self, turn: Turn) -> list[Fact]:
        schema = self.extract_schema(turn)
        if schema is None:
            return []
        data = await self.env.llm.ask_json(
            self.extract_prompt,
            f"{exchange(turn, CLIP_CHARS)}\nAnswer:",
            schema, name="facts", max_tokens=400,
        )
        return self.parse_facts(data)

    async def observe(self, turn: Turn) -> None:
        outcome = Outcome()
        self.last = outcome
        try:
            outcome.facts = await self.extract(turn)
            if outcome.facts:
                await self._update(turn.index, outcome)
        except (MalformedJSON, LLMError) as exc:
            outcome.skipped = f"memory update skipped for turn {turn.index}: {exc}"
            log.warning(outcome.skipped)
        for event in outcome.events:
            self._pending.append({"type": "memory", "backend": self.name, **event})
        if outcome.skipped:
            self._pending.append({"type": "memory", "backend": self.name, "op": "skipped",
                                  "id": "", "text": outcome.skipped})

    async def _update(self, turn_index: int, outcome: Outcome) -> None:
        facts = outcome.facts
        vectors = await asyncio.to_thread(self.env.embedder.embed,
                                          [f.text for f in facts])
        shown: dict[str, int] = {}  # memory id -> small integer the model sees
        related: list[list[int]] = []  # per fact, the numbers of memories close to it
        for vector in vectors:
            close = []
            for memory, score in self.memories.similar(vector, SIMILAR):
                number = shown.setdefault(memory.id, len(shown))
                if score >= RELATED:
                    close.append(number)
            related.append(close)
        by_number = {n: memory_id for memory_id, n in shown.items()}
        existing = "\n".join(f"{n}: {self.memory_line(self.memories.get(mid))}"  # type: ignore[arg-type]
                             for mid, n in shown.items()) or "(none)"
        new = "\n".join(f"{i}: {self.fact_line(f)}" for i, f in enumerate(facts))
        data = await self.env.llm.ask_json(
            UPDATE_PROMPT, f"Existing memories:\n{existing}\nNew facts:\n{new}\nAnswer:",
            constrained_update_schema([f.text for f in facts], related)
            if self.env.llm.constrained() else update_schema(len(facts), len(shown)),
            name="operations", max_tokens=400)
        operations = data.get("operations", []) if isinstance(data, dict) else data
        if not isinstance(operations, list):
            raise MalformedJSON("'operations' is not a list")
        decided: set[int] = set()
        touched: set[str] = set()
        for op in operations:
            problem = self._apply(op, facts, vectors, by_number, decided, touched, turn_index,
                                  outcome)
            if problem:
                outcome.rejected.append(problem)
                log.warning("mem0: rejected operation %r: %s", op, problem)

    def _apply(self, op: Any, facts: list[Fact], vectors: np.ndarray, by_number: dict[int, str],
               decided: set[int], touched: set[str], turn: int, outcome: Outcome) -> str | None:
        """Apply one operation; returns why it was rejected, or None."""
        if not isinstance(op, dict):
            return "not an object"
        kind = str(op.get("op", "")).upper()
        if kind in ("ADD", "NOOP"):
            op = {**op, "memory": None}
        if kind not in OPS:
            return f"unknown op {kind!r}"
        try:
            index = int(op.get("fact"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return "missing fact number"
        if not 0 <= index < len(facts):
            return f"no fact {index}"
        if index in decided:
            return f"fact {index} already decided"
        fact, vector = facts[index], vectors[index]
        memory_id = None
        if kind in ("UPDATE", "DELETE"):
            try:
                number = int(op.get("memory"))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                return f"{kind} without a memory number"
            memory_id = by_number.get(number)
            if memory_id is None:
                return f"invented memory id {number}"
            if memory_id in touched:
                return f"memory {number} already changed this turn"
        decided.add(index)
        if kind == "ADD":
            memory, event = self.memories.add(fact.text, fact.locations, vector, turn)
            outcome.events.append({"op": "ADD", "id": memory.id, "text": memory.text})
        elif kind == "UPDATE":
            text = str(op.get("text") or fact.text).strip()
            merged_vector = self.env.embedder.embed([text])[0] if text != fact.text else vector
            self.memories.update(memory_id, text, fact.locations, merged_vector, turn)  # type: ignore[arg-type]
            touched.add(memory_id)  # type: ignore[arg-type]
            outcome.events.append({"op": "UPDATE", "id": memory_id, "text": text})
        elif kind == "DELETE":
            event = self.memories.delete(memory_id, turn)  # type: ignore[arg-type]
            touched.add(memory_id)  # type: ignore[arg-type]
            outcome.events.append({"op": "DELETE", "id": memory_id, "text": event.old})
        return None

    def drain_records(self) -> list[dict[str, Any]]:
        """Transcript records of the memory changes since the last call."""
        records, self._pending = self._pending, []
        return records

    # -- context ------------------------------------------------------------------
    async def relevant(self, query: str) -> list[Memory]:
        if not len(self.memories):
            return []
        vector = (await asyncio.to_thread(self.env.embedder.embed, [query]))[0]
        return [m for m, _ in self.memories.similar(vector, self.top_k)]

    def memory_sections(self, memories: list[Memory], budget: int) -> list[Section]:
        sections: list[Section] = []
        used = 0
        for memory in memories:
            text = f"- {memory.text}"
            tokens = self.env.count(text)
            if used + tokens > budget:
                break
            sections.append(Section("memory", memory.id, text, tokens))
            used += tokens
        return sections

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        left = budget - sum(s.tokens for s in repo)
        memories = self.memory_sections(await self.relevant(query), left)
        return ContextPack(query, [*memories, *repo], self.env.count(query))

    def state_digest(self) -> str:
        return self.memories.digest()

    # -- steering (memory/turn/steering.py): the developer forgets or edits a memory ------------
    def memory_items(self) -> list[MemoryItem]:
        return [MemoryItem(m.id, m.text) for m in self.memories.live()]

    def _last_turn(self) -> int:
        return max((m.updated for m in self.memories.live()), default=0)

    async def forget(self, memory_id: str) -> str:
        if self.memories.get(memory_id) is None:
            raise KeyError(memory_id)
        return self.memories.delete(memory_id, self._last_turn(), op="FORGET").old

    async def edit(self, memory_id: str, text: str) -> str:
        memory = self.memories.get(memory_id)
        if memory is None:
            raise KeyError(memory_id)
        vector = (await asyncio.to_thread(self.env.embedder.embed, [text]))[0]
        return self.memories.update(memory_id, text, [], vector, self._last_turn(),
                                    op="EDIT").old


CLIP_CHARS = 2000  # of each side of the exchange shown to the extractor
MAX_STATEMENTS = 12  # developer statements offered as facts under constrained decoding
_FENCED = re.compile(r"```.*?(?:```|$)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def developer_lines(text: str) -> list[str]:
    """The lines of a message outside its code blocks, list markers stripped."""
    return [_ITEM.sub("", line).strip() for line in _FENCED.sub("\n", text).splitlines()]


def statements(text: str) -> list[str]:
    """The developer's sentences that could be facts: code blocks left out, list
    markers stripped, at least three words, at most 300 characters, no repeats."""
    found: list[str] = []
    for line in developer_lines(text):
        for sentence in _SENTENCE_END.split(line):
            sentence = sentence.strip()
            if len(sentence.split()) >= 3 and len(sentence) <= 300:
                found.append(sentence)
    return list(dict.fromkeys(found))[:MAX_STATEMENTS]


def fact_key(text: str) -> str:
    """What makes two facts repeats: the same text up to case, spacing and a final period."""
    return " ".join(text.lower().split()).rstrip(".")


def unique_facts(facts: list[Fact]) -> list[Fact]:
    """Facts without repeats (``fact_key``), first kept."""
    seen: set[str] = set()
    kept = []
    for fact in facts:
        key = fact_key(fact.text)
        if key not in seen:
            seen.add(key)
            kept.append(fact)
    return kept
