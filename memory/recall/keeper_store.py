"""The repository store of ``mem0`` and ``mem0r`` (``shared_memory``: scope
``<backend>:repo`` in the repository's LanceDB) as ``memory.recall.keeper.Keeper`` reads it.

``cards`` keeps its facts in ``cards_kept`` (``memory/backends/cards/kept.py``); the two
mem0 backends keep theirs in the ``memories`` and ``memory_events`` tables that every
mem0 session of the repository with shared memory reads and writes
(``memory/backends/_memstore.py``). Their memories carry text and the code locations the
extraction named, no anchor (freshness is "unanchored"), no pin and no supersession: an
UPDATE replaces a memory's text in place and its history is the store's events. Reading
needs LanceDB (seconds of CPU to import, paid at the server's first answer); a write by
another process is seen through the table's version, read again at each call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from memory.backends.cards.kept import Kept, KeptStoreError

STORE_BACKENDS = ("mem0", "mem0r")


class MemoryRows:
    """One mem0 backend's repository memories, as kept rows (``Kept``)."""

    pins = False  # mem0's memories have no pin

    def __init__(self, home: Path, backend: str, dim: int) -> None:
        if backend not in STORE_BACKENDS:
            raise ValueError(f"{backend} keeps no memory store")
        self.home = home
        self.scope = f"{backend}:repo"
        self.dim = dim
        self._memories: Any = None  # memory.backends._memstore.MemoryStore, opened on use
        self._version: int | None = None

    def _open(self) -> Any:
        from memory.backends._memstore import MemoryStore
        from memory.store import Store

        try:
            self._memories = MemoryStore(Store(self.home / "index.lance"), self.scope,
                                         self.dim)
            self._version = self._memories.version()
        except Exception as exc:  # lance raises OSError, ValueError, RuntimeError...
            raise KeptStoreError(f"the memory store under {self.home} cannot be read: "
                                 f"{exc}") from exc
        return self._memories

    def changed(self) -> bool:
        if self._memories is None:
            return True
        try:
            return self._memories.version(latest=True) != self._version
        except Exception as exc:
            raise KeptStoreError(f"the memory store under {self.home} cannot be read: "
                                 f"{exc}") from exc

    def load(self) -> tuple[list[Kept], dict[str, np.ndarray]]:
        memories = self._open()
        rows = [Kept(m.id, m.text, "", list(m.locations), "", m.created, self.scope)
                for m in memories.live()]
        return rows, memories.vectors()

    def set(self, memory_id: str, **values: object) -> None:
        """Forget (``forgotten=True``): the store's FORGET, as the app's /forget does."""
        if not values.get("forgotten"):
            raise KeptStoreError(f"{self.scope} keeps no pins")
        memories = self._memories or self._open()
        if memories.get(memory_id) is None:
            raise KeptStoreError(f"no memory {memory_id} in {self.scope}")
        try:
            turn = max((m.updated for m in memories.live()), default=0)
            memories.delete(memory_id, turn, op="FORGET")
        except Exception as exc:
            raise KeptStoreError(f"the memory store under {self.home} could not be "
                                 f"written: {exc}") from exc

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The memory's events (ADD, UPDATE, DELETE, FORGET, EDIT), oldest first."""
        memories = self._memories or self._open()
        return [{"op": e.op, "old": e.old, "new": e.new, "turn": e.turn, "at": e.at}
                for e in memories.events(memory_id)]
