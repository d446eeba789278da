"""Read a memory backend's store for people: each memory with its event history."""

from __future__ import annotations

import time
from pathlib import Path

from memory import _git
from memory.backends._memstore import MemoryStore
from memory.embed import MINILM_DIM
from memory.home import repo_home
from memory.store import Store
from memory.transcript import latest_session, read_transcript

MEMORY_BACKENDS = ("mem0", "mem0r")


class MemoryListingError(ValueError):
    """Nothing to list: unknown backend or no session."""


def scope_for(home: Path, backend: str, session: str | None, shared: bool) -> str:
    if backend not in MEMORY_BACKENDS:
        raise MemoryListingError(
            f"{backend!r} keeps no memory store; memory backends: {', '.join(MEMORY_BACKENDS)}")
    if shared:
        return f"{backend}:repo"
    if session is None:
        latest = latest_session(home)
        record = read_transcript(latest).session if latest else None
        if record is None:
            raise MemoryListingError(f"no recorded session under {home}")
        session = str(record["id"])
    return f"{backend}:{session}"


def list_memories(repo: Path, backend: str, *, session: str | None = None,
                  shared: bool = False, data_dir: Path | None = None,
                  dim: int = MINILM_DIM) -> str:
    """A plain-text listing of the live memories of one scope, then every event."""
    home = repo_home(_git.toplevel(repo), data_dir)
    scope = scope_for(home, backend, session, shared)
    store = MemoryStore(Store(home / "index.lance"), scope, dim)
    lines = [f"{scope}: {len(store)} memories"]
    for memory in store.live():
        where = f"  [{', '.join(memory.locations)}]" if memory.locations else ""
        lines.append(f"  {memory.id[:8]}  {memory.text}{where}")
    events = store.events()
    if events:
        lines.append("history:")
    for event in events:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at))
        change = event.new if event.op == "ADD" else (
            event.old if event.op == "DELETE" else f"{event.old} -> {event.new}")
        lines.append(f"  {stamp}  turn {event.turn:>3}  {event.op:6} {event.memory_id[:8]}  "
                     f"{change}")
    return "\n".join(lines)
