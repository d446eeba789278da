"""``amem`` (Xu et al., 2025, A-MEM): notes that link and evolve, Zettelkasten-style.

Each committed turn becomes a note {content, timestamp, keywords, tags, context,
embedding, links}. Note construction: the LLM writes the keywords, a one-sentence
context and the tags; the embedding encodes content + keywords + tags + context
(the paper's Eq. 3). Link generation and memory evolution: the nearest 5 notes
(A-MEM's ``find_related_memories(k=5)``) are shown with the new one; the LLM decides
whether to evolve, and how: ``strengthen`` links the new note to chosen neighbours
and may retag it, ``update_neighbor`` rewrites each neighbour's context and tags.
Retrieval: the top-k notes by similarity (A-MEM's ``search_agentic``, k=5) plus the
notes they link to (at most k more), and the top-10 repository functions.

Failures follow A-MEM: a failed analysis keeps the note with empty attributes
(context "General"), a failed evolution keeps it unlinked; both are recorded as
``skipped``. The notes live in memory and are rebuilt on a switch or resume.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.backends._journal import Journal
from memory.backends._topics import terms
from memory.backends.base import BackendEnv, Digest, exchange, repo_sections, split_budget
from memory.backends.mem0 import statements
from memory.index.embed import cosine, top_k
from memory.llm.client import LLMError
from memory.turn.steering import MemoryItem
from memory.types import ContextPack, Section, Turn

NEIGHBORS = 5  # notes shown to the evolution step
TOP_K = 5  # notes retrieved on a query, plus as many linked notes at most
CLIP = 1500  # characters of each side of the exchange kept in a note
MAX_KEYWORDS, MAX_TAGS, MAX_TERMS = 6, 5, 24
ACTIONS = ("strengthen", "update_neighbor")
CATEGORIES = ("requirement", "bug", "feature", "refactor", "convention", "question", "test",
              "design", "docs")

NOTE_PROMPT = """You index the notes of a coding assistant's memory. Read one exchange
between a developer and the assistant and describe it:
- keywords: 3 to 6 specific terms (file, function and class names, key concepts), the
  most important first; no speaker names, no dates.
- context: one sentence giving the topic, the main point and what the developer wants.
- tags: 2 to 5 broad categories: the domain, and the kind of request (bug, feature,
  refactor, convention, question, test).

Example.
Developer: parse_date in utils/dates.py must return UTC datetimes.
Assistant: I changed parse_date to attach timezone.utc.
Answer: {"keywords": ["parse_date", "utils/dates.py", "UTC"], "context": "The developer
requires parse_date to return timezone-aware UTC datetimes.", "tags": ["dates",
"requirement", "bug"]}"""
# {"keywords": [str], "context": str, "tags": [str]}

EVOLVE_PROMPT = """You organise a coding assistant's memory notes. A new note arrived;
below are its nearest existing notes, numbered. Decide:
1. should_evolve: whether the new note relates to any of them.
2. actions: "strengthen" to link the new note to related notes (list their numbers in
   suggested_connections, and give the new note's updated tags in tags_to_update);
   "update_neighbor" to refine the neighbours' context and tags in the light of the new
   note. new_context_neighborhood and new_tags_neighborhood give, for every neighbour in
   order, its context and tags after the update (unchanged ones copied as they are).
Answer with the JSON object only."""
# {"should_evolve": bool, "actions": [..], "suggested_connections": [int],
#  "tags_to_update": [str], "new_context_neighborhood": [str],
#  "new_tags_neighborhood": [[str]]}


def _strings(most: int, length: int) -> dict[str, Any]:
    return {"type": "array", "maxItems": most,
            "items": {"type": "string", "minLength": 1, "maxLength": length}}


def _choose(choices: list[str], most: int) -> dict[str, Any]:
    return {"type": "array", "maxItems": min(most, len(choices)),
            "items": {"type": "string", "enum": choices}}


def note_schema(candidates: list[str] | None = None,
                sentences: list[str] | None = None) -> dict[str, Any]:
    """For a model that writes freely: short strings. Under constrained decoding (a small
    model fills strings with junk to their maximum length): keywords among the exchange's
    own terms, the context among the developer's sentences, tags among the categories and
    those terms."""
    keywords, tags = _strings(MAX_KEYWORDS, 60), _strings(MAX_TAGS, 30)
    context: dict[str, Any] = {"type": "string", "minLength": 3, "maxLength": 240}
    if candidates:
        keywords = {**_choose(candidates, MAX_KEYWORDS), "minItems": 1}
        tags = _choose(list(dict.fromkeys([*CATEGORIES, *candidates[:8]])), MAX_TAGS)
    if sentences:
        context = {"type": "string", "enum": sentences}
    return {"type": "object",
            "properties": {"keywords": keywords, "context": context, "tags": tags},
            "required": ["keywords", "context", "tags"], "additionalProperties": False}


def evolve_schema(note: Note, neighbors: list[Note], constrained: bool) -> dict[str, Any]:
    """One context and one tag list per neighbour, in order. Under constrained decoding
    connections are numbers of shown neighbours, a neighbour's new context is its own or
    the new note's, and tags come from the notes shown and the categories."""
    n = len(neighbors)
    contexts: dict[str, Any] = {"type": "array", "minItems": n, "maxItems": n,
                                "items": {"type": "string", "maxLength": 240}}
    neighbor_tags: dict[str, Any] = {"type": "array", "minItems": n, "maxItems": n,
                                     "items": _strings(MAX_TAGS, 30)}
    connections: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}
    tags = _strings(MAX_TAGS, 30)
    if constrained:
        shown = list(dict.fromkeys([*note.tags, *(t for nb in neighbors for t in nb.tags),
                                    *CATEGORIES]))
        connections = {"type": "array", "maxItems": n,
                       "items": {"type": "integer", "enum": list(range(n))}}
        tags = _choose(shown, MAX_TAGS)
        contexts = {**contexts, "prefixItems": [
            {"type": "string", "enum": list(dict.fromkeys([nb.context, note.context]))}
            for nb in neighbors]}
        neighbor_tags = {**neighbor_tags, "prefixItems": [_choose(shown, MAX_TAGS)
                                                          for _ in neighbors]}
        del contexts["items"], neighbor_tags["items"]
    return {"type": "object",
            "properties": {
                "should_evolve": {"type": "boolean"},
                "actions": {"type": "array", "maxItems": 2,
                            "items": {"type": "string", "enum": list(ACTIONS)}},
                "suggested_connections": connections,
                "tags_to_update": tags,
                "new_context_neighborhood": contexts,
                "new_tags_neighborhood": neighbor_tags,
            },
            "required": ["should_evolve", "actions", "suggested_connections", "tags_to_update",
                         "new_context_neighborhood", "new_tags_neighborhood"],
            "additionalProperties": False}


@dataclass
class Note:
    id: str
    content: str
    timestamp: str  # YYYYMMDDHHMM, as A-MEM
    turn: int
    keywords: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    context: str = "General"
    links: list[str] = field(default_factory=list)

    def embedding_text(self) -> str:
        return " ".join([self.content, ", ".join(self.keywords), ", ".join(self.tags),
                         self.context])

    def describe(self) -> str:
        return (f"context: {self.context}\nkeywords: {', '.join(self.keywords)}\n"
                f"tags: {', '.join(self.tags)}")


def _clean(items: Any, most: int) -> list[str]:
    if not isinstance(items, list):
        return []
    return list(dict.fromkeys(str(i).strip() for i in items if str(i).strip()))[:most]


class AMemBackend:
    name = "amem"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self.top_k = int(env.options.get("amem_top_k", TOP_K))  # type: ignore[call-overload]
        self.neighbors = int(env.options.get("amem_neighbors", NEIGHBORS))  # type: ignore[call-overload]
        self.notes: dict[str, Note] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self.journal = Journal(self.name)
        self._digest = Digest()


    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.env.embedder.embed(texts), dtype=np.float32)

    # -- observe ----------------------------------------------------------------------
    async def observe(self, turn: Turn) -> None:
        content = exchange(turn, CLIP)
        stamp = time.strftime("%Y%m%d%H%M", time.localtime(turn.started or 0))
        note = Note(f"n{turn.index}", content, stamp, turn.index)
        await self._construct(note, turn)
        vector = (await asyncio.to_thread(self._embed, [note.embedding_text()]))[0]
        neighbors = self.nearest(vector, self.neighbors)
        self.notes[note.id], self._vectors[note.id] = note, vector
        self._digest.update("add", note.id, note.content, note.keywords, note.tags, note.context)
        self.journal.op("ADD", note.id, f"{note.context} [{', '.join(note.keywords)}]")
        if neighbors:
            await self._evolve(note, neighbors)

    async def _construct(self, note: Note, turn: Turn) -> None:
        schema = note_schema()
        if self.env.llm.constrained():
            schema = note_schema(terms(note.content, MAX_TERMS), statements(turn.user))
        try:
            data = await self.env.llm.ask_json(NOTE_PROMPT, f"{note.content}\nAnswer:", schema,
                                               name="note", max_tokens=500)
        except LLMError as exc:
            self.journal.skip(f"note {note.id}: analysis skipped (kept without keywords): {exc}")
            return
        note.keywords = _clean(data.get("keywords"), MAX_KEYWORDS)
        note.tags = _clean(data.get("tags"), MAX_TAGS)
        note.context = str(data.get("context") or "").strip() or "General"

    def nearest(self, vector: np.ndarray, k: int) -> list[Note]:
        if not self.notes or k <= 0:
            return []
        ids = list(self._vectors)
        sims = cosine(vector, np.stack([self._vectors[i] for i in ids]))
        return [self.notes[ids[int(i)]] for i in top_k(sims, k)]

    async def _evolve(self, note: Note, neighbors: list[Note]) -> None:
        shown = "\n\n".join(f"[{i}] {n.content}\n{n.describe()}" for i, n in enumerate(neighbors))
        user = (f"New note:\n{note.content}\n{note.describe()}\n\n"
                f"Nearest notes ({len(neighbors)}):\n{shown}\nAnswer:")
        try:
            data = await self.env.llm.ask_json(
                EVOLVE_PROMPT, user, evolve_schema(note, neighbors, self.env.llm.constrained()),
                name="evolution", max_tokens=200 + 120 * len(neighbors))
        except LLMError as exc:
            self.journal.skip(f"note {note.id}: evolution skipped (kept unlinked): {exc}")
            return
        if not data.get("should_evolve"):
            return
        actions = set(data.get("actions") or [])
        if "strengthen" in actions:
            self._strengthen(note, neighbors, data)
        if "update_neighbor" in actions:
            await self._update_neighbors(neighbors, data)

    def _strengthen(self, note: Note, neighbors: list[Note], data: dict[str, Any]) -> None:
        links = []
        for number in data.get("suggested_connections") or []:
            if isinstance(number, int) and 0 <= number < len(neighbors):
                links.append(neighbors[number].id)  # an invented number is ignored
        links = [i for i in dict.fromkeys(links) if i not in note.links]
        tags = _clean(data.get("tags_to_update"), MAX_TAGS)
        if not links and (not tags or tags == note.tags):
            return
        note.links += links
        if tags:
            note.tags = tags
        self._digest.update("strengthen", note.id, note.links, note.tags)
        self.journal.op("LINK", note.id, f"{note.id} -> {', '.join(note.links) or '(none)'}; "
                                         f"tags: {', '.join(note.tags)}")

    async def _update_neighbors(self, neighbors: list[Note], data: dict[str, Any]) -> None:
        contexts = data.get("new_context_neighborhood") or []
        tag_lists = data.get("new_tags_neighborhood") or []
        changed: list[Note] = []
        for i, neighbor in enumerate(neighbors):
            context = str(contexts[i]).strip() if i < len(contexts) else ""
            tags = _clean(tag_lists[i], MAX_TAGS) if i < len(tag_lists) else []
            new_context = context or neighbor.context
            new_tags = tags or neighbor.tags
            if (new_context, new_tags) == (neighbor.context, neighbor.tags):
                continue
            neighbor.context, neighbor.tags = new_context, new_tags
            changed.append(neighbor)
        if not changed:
            return
        vectors = await asyncio.to_thread(self._embed, [n.embedding_text() for n in changed])
        for neighbor, vector in zip(changed, vectors, strict=True):
            self._vectors[neighbor.id] = vector
            self._digest.update("evolve", neighbor.id, neighbor.context, neighbor.tags)
            self.journal.op("EVOLVE", neighbor.id,
                            f"{neighbor.context} [tags: {', '.join(neighbor.tags)}]")

    def drain_records(self) -> list[dict[str, Any]]:
        return self.journal.drain()

    # -- context ----------------------------------------------------------------------
    def retrieve(self, vector: np.ndarray) -> list[tuple[Note, bool]]:
        """The top-k notes, then the notes they link to (at most k), each once; the flag
        says whether a note came in as a link."""
        found = [(n, False) for n in self.nearest(vector, self.top_k)]
        seen = {n.id for n, _ in found}
        linked = 0
        for note, _ in list(found):
            for link in note.links:
                if linked >= self.top_k:
                    break
                if link not in seen and link in self.notes:
                    found.append((self.notes[link], True))
                    seen.add(link)
                    linked += 1
        return found

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        left = budget - sum(s.tokens for s in repo)
        sections: list[Section] = []
        if self.notes:
            vector = (await asyncio.to_thread(self._embed, [query]))[0]
            for note, linked in self.retrieve(vector):
                via = " (linked)" if linked else ""
                text = f"[note {note.id}, {note.timestamp}{via}]\n{note.content}\n{note.describe()}"
                tokens = self.env.count(text)
                if tokens > left:
                    continue
                sections.append(Section("memory", note.id, text, tokens))
                left -= tokens
        return ContextPack(query, [*sections, *repo], self.env.count(query))

    # -- steering (memory/turn/steering.py): the developer forgets or edits a note -----------
    def memory_items(self) -> list[MemoryItem]:
        return [MemoryItem(n.id, n.content) for n in self.notes.values()]

    async def forget(self, memory_id: str) -> str:
        note = self.notes.pop(memory_id)
        self._vectors.pop(memory_id, None)
        for other in self.notes.values():  # no note links to a forgotten one
            if memory_id in other.links:
                other.links.remove(memory_id)
        self._digest.update("forget", memory_id)
        return note.content

    async def edit(self, memory_id: str, text: str) -> str:
        note = self.notes[memory_id]
        old, note.content = note.content, text
        self._vectors[memory_id] = (await asyncio.to_thread(
            self._embed, [note.embedding_text()]))[0]
        self._digest.update("edit", memory_id, text)
        return old

    def state_digest(self) -> str:
        return self._digest.value
