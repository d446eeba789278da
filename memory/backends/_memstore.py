"""Memories and their event history, persisted in LanceDB, one scope at a time.

Text is redacted (``memory.redact``) before it is kept, in memory and on disk alike.

A scope is ``<backend>:<session id>`` (memories of one session) or
``<backend>:repo`` (shared by every session of the repository).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.index.embed import cosine, top_k
from memory.redact import redact
from memory.store import Store, quote

MIRROR_SEARCH_MAX = 5_000  # live memories searched in process rather than through LanceDB


@dataclass
class Memory:
    id: str
    text: str
    locations: list[str] = field(default_factory=list)
    created: int = 0  # turn index
    updated: int = 0


@dataclass(frozen=True)
class MemoryEvent:
    memory_id: str
    op: str  # ADD | UPDATE | DELETE, or FORGET | EDIT when the developer did it
    old: str
    new: str
    turn: int
    at: float


def _memory_schema(dim: int) -> Any:
    import pyarrow as pa

    return pa.schema([
        pa.field("id", pa.string()), pa.field("scope", pa.string()),
        pa.field("text", pa.string()), pa.field("locations", pa.list_(pa.string())),
        pa.field("created", pa.int32()), pa.field("updated", pa.int32()),
        pa.field("deleted", pa.bool_()), pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


def _event_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        pa.field("memory_id", pa.string()), pa.field("scope", pa.string()),
        pa.field("op", pa.string()), pa.field("old", pa.string()), pa.field("new", pa.string()),
        pa.field("turn", pa.int32()), pa.field("at", pa.float64()),
    ])


class MemoryStore:
    """The live memories of one scope, mirrored in memory, written through to LanceDB."""

    def __init__(self, store: Store, scope: str, dim: int) -> None:
        self.store = store
        self.scope = scope
        self._memories = store.table("memories", _memory_schema(dim))
        self._events = store.table("memory_events", _event_schema())
        where = f"scope = {quote(scope)} AND deleted = false"
        rows = store.rows(self._memories, ["id", "text", "locations", "created", "updated",
                                           "vector"], where)
        self._live: dict[str, Memory] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._matrix: tuple[list[str], np.ndarray] | None = None  # ids, normalised rows
        for r in sorted(rows, key=lambda r: (r["created"], r["id"])):
            self._live[r["id"]] = Memory(r["id"], r["text"], list(r["locations"] or []),
                                         r["created"], r["updated"])
            self._vectors[r["id"]] = np.asarray(r["vector"], dtype=np.float32)

    def live(self) -> list[Memory]:
        return list(self._live.values())

    def vectors(self) -> dict[str, np.ndarray]:
        """The live memories' vectors by id."""
        return dict(self._vectors)

    def version(self, latest: bool = False) -> int:
        """The memories table's version as read (``latest``: as another process may
        have left it since)."""
        if latest:
            self._memories.checkout_latest()
        return int(self._memories.version)

    def get(self, memory_id: str) -> Memory | None:
        return self._live.get(memory_id)

    def __len__(self) -> int:
        return len(self._live)

    def similar(self, vector: np.ndarray, k: int) -> list[tuple[Memory, float]]:
        """The ``k`` live memories most similar to ``vector`` by cosine: an exact scan of the
        mirrored vectors while the scope is small (a LanceDB query costs ~15 ms whatever the
        size), LanceDB's search beyond that."""
        if not self._live or k <= 0:
            return []
        if len(self._live) <= MIRROR_SEARCH_MAX:
            if self._matrix is None:  # rows normalised once per change, not per query
                ids = list(self._vectors)
                rows = np.stack([self._vectors[i] for i in ids]).astype(np.float32)
                norms = np.linalg.norm(rows, axis=1, keepdims=True)
                self._matrix = (ids, rows / np.maximum(norms, 1e-12))
            ids, matrix = self._matrix
            query = np.asarray(vector, dtype=np.float32)
            sims = cosine(query / max(float(np.linalg.norm(query)), 1e-12), matrix)
            return [(self._live[ids[i]], float(sims[i])) for i in top_k(sims, k)]
        where = f"scope = {quote(self.scope)} AND deleted = false"
        rows = self.store.vector_search(self._memories, vector, k, where, ["id"])
        return [(self._live[r["id"]], 1.0 - float(r["_distance"]))
                for r in rows if r["id"] in self._live]

    def _row(self, memory: Memory, vector: np.ndarray) -> dict[str, Any]:
        return {"id": memory.id, "scope": self.scope, "text": memory.text,
                "locations": memory.locations, "created": memory.created,
                "updated": memory.updated, "deleted": False,
                "vector": np.asarray(vector, dtype=np.float32).tolist()}

    def _event(self, memory_id: str, op: str, old: str, new: str, turn: int) -> MemoryEvent:
        event = MemoryEvent(memory_id, op, old, new, turn, time.time())
        self.store.add(self._events, [{"memory_id": memory_id, "scope": self.scope,
                                       "op": op, "old": old, "new": new, "turn": turn,
                                       "at": event.at}])
        return event

    def add(self, text: str, locations: list[str], vector: np.ndarray,
            turn: int) -> tuple[Memory, MemoryEvent]:
        text, locations = redact(text), [redact(loc) for loc in locations]
        memory = Memory(uuid.uuid4().hex, text, locations, turn, turn)
        self.store.add(self._memories, [self._row(memory, vector)])
        self._live[memory.id], self._vectors[memory.id] = memory, vector
        self._matrix = None
        return memory, self._event(memory.id, "ADD", "", text, turn)

    def update(self, memory_id: str, text: str, locations: list[str], vector: np.ndarray,
               turn: int, op: str = "UPDATE") -> MemoryEvent:
        memory = self._live[memory_id]
        text, locations = redact(text), [redact(loc) for loc in locations]
        old = memory.text
        memory.text, memory.updated = text, turn
        memory.locations = list(dict.fromkeys([*memory.locations, *locations]))
        self.store.delete(self._memories, f"id = {quote(memory_id)}")
        self.store.add(self._memories, [self._row(memory, vector)])
        self._vectors[memory_id] = vector
        self._matrix = None
        return self._event(memory_id, op, old, text, turn)

    def delete(self, memory_id: str, turn: int, op: str = "DELETE") -> MemoryEvent:
        memory = self._live.pop(memory_id)
        self._vectors.pop(memory_id, None)
        self._matrix = None
        self._memories.update(where=f"id = {quote(memory_id)}", values={"deleted": True})
        return self._event(memory_id, op, memory.text, "", turn)

    def events(self, memory_id: str | None = None) -> list[MemoryEvent]:
        where = f"scope = {quote(self.scope)}"
        if memory_id:
            where += f" AND memory_id = {quote(memory_id)}"
        rows = self.store.rows(self._events, ["memory_id", "op", "old", "new", "turn", "at"],
                               where)
        return sorted((MemoryEvent(**r) for r in rows), key=lambda e: e.at)

    def digest(self) -> str:
        h = hashlib.sha256(self.scope.encode())
        for memory in sorted(self._live.values(), key=lambda m: m.id):
            h.update(f"\0{memory.id}\0{memory.text}\0{'|'.join(memory.locations)}".encode())
        return h.hexdigest()
