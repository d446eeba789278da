"""The facts ``cards`` keeps for a repository (``shared_memory``), beyond one session.

With ``shared_memory`` on, every fact a session adds to its graph is also kept here, and
every session of the repository (the app, a headless chat, the MCP server of
``engram mcp``) starts with the kept facts in its graph: a fact said in a chat is
recalled by the server, and one remembered through the server is in the next chat's
context. Each kept fact carries where it came from (session, turn, source), the code it
is about with its anchor (the file's blob, a hash of the symbol's code and HEAD when it
was kept: ``stale`` compares against these), whether it is pinned, what superseded it,
and whether the developer forgot it.

One LanceDB table, ``cards_kept``, in the repository's store (``index.lance``, beside the
index). LanceDB commits every write as a new table version; two processes appending at
once are reconciled by Lance, but a read-modify-write (pin, supersede, forget) is not,
so every write here holds an exclusive lock on ``cards_kept.lock`` beside the store
(``fcntl.flock``: released by the kernel when a process dies). Readers take no lock:
``changed()`` checks the table's latest version and a process reads the rows again only
when another one wrote.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memory.store import Store, quote

KEPT_TABLE = "cards_kept"
LOCK_FILE = "cards_kept.lock"
FORGOTTEN = "forgotten"  # a node's ``superseded_by`` when the developer forgot it
_COLUMNS = ("id", "text", "subject", "locations", "session", "turn", "source", "created",
            "anchor_location", "anchor_blob", "anchor_code", "anchor_head", "pinned",
            "superseded_by", "forgotten")


class KeptStoreError(RuntimeError):
    """The kept facts cannot be read or written (a corrupt or unreadable store)."""


@dataclass
class Kept:
    """One kept fact."""

    id: str
    text: str
    subject: str = ""
    locations: list[str] = field(default_factory=list)
    session: str = ""
    turn: int = -1
    source: str = ""  # "chat" (a session's statement) | "mcp" (remembered through the server)
    created: float = 0.0
    anchor_location: str = ""  # the location its anchor is of ("" when not anchored)
    anchor_blob: str = ""
    anchor_code: str = ""
    anchor_head: str = ""
    pinned: bool = False
    superseded_by: str = ""  # the kept id that revised it ("" while current)
    forgotten: bool = False

    @property
    def current(self) -> bool:
        return not self.superseded_by and not self.forgotten


def _schema(dim: int) -> Any:
    import pyarrow as pa

    text = pa.string()
    return pa.schema([
        pa.field("id", text), pa.field("text", text), pa.field("subject", text),
        pa.field("locations", pa.list_(text)), pa.field("session", text),
        pa.field("turn", pa.int32()), pa.field("source", text),
        pa.field("created", pa.float64()), pa.field("anchor_location", text),
        pa.field("anchor_blob", text), pa.field("anchor_code", text),
        pa.field("anchor_head", text), pa.field("pinned", pa.bool_()),
        pa.field("superseded_by", text), pa.field("forgotten", pa.bool_()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


class KeptStore:
    """The kept facts of one repository: read whole, written one change at a time."""

    def __init__(self, home: Path, dim: int) -> None:
        self.home = home
        self.dim = dim
        self.lock_path = home / LOCK_FILE
        self._store: Store | None = None
        self._table: Any = None
        self._version = -1

    # -- access ------------------------------------------------------------------------
    def _open(self) -> Any:
        if self._table is None:
            try:
                self._store = Store(self.home / "index.lance")
                self._table = self._store.table(KEPT_TABLE, _schema(self.dim))
            except Exception as exc:  # lance raises OSError, ValueError, RuntimeError...
                raise KeptStoreError(f"the memory store under {self.home} cannot be "
                                     f"opened: {exc}") from exc
        return self._table

    @contextmanager
    def _locked(self) -> Iterator[Any]:
        """The table, with the write lock held, at its latest version."""
        self.home.mkdir(parents=True, exist_ok=True)
        with self.lock_path.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                table = self._open()
                table.checkout_latest()
                yield table
            except KeptStoreError:
                raise
            except Exception as exc:
                raise KeptStoreError(f"the memory store under {self.home} could not be "
                                     f"written: {exc}") from exc
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def changed(self) -> bool:
        """Whether any process wrote since this one last read (``load``)."""
        try:
            table = self._open()
            table.checkout_latest()
            return int(table.version) != self._version
        except KeptStoreError:
            raise
        except Exception as exc:
            raise KeptStoreError(f"the memory store under {self.home} cannot be read: "
                                 f"{exc}") from exc

    def load(self) -> tuple[list[Kept], dict[str, np.ndarray]]:
        """Every kept fact (oldest first) and their vectors."""
        try:
            table = self._open()
            table.checkout_latest()
            version = int(table.version)
            if table.count_rows() == 0:
                self._version = version
                return [], {}
            data = table.search().select([*_COLUMNS, "vector"]).limit(None).to_arrow()
        except KeptStoreError:
            raise
        except Exception as exc:
            raise KeptStoreError(f"the memory store under {self.home} cannot be read: "
                                 f"{exc}") from exc
        columns = {c: data.column(c).to_pylist() for c in _COLUMNS}
        vectors = data.column("vector").combine_chunks()
        matrix = vectors.values.to_numpy(zero_copy_only=False).astype(np.float32)
        matrix = matrix.reshape(-1, self.dim)
        kept = [Kept(**{c: columns[c][i] for c in _COLUMNS}) for i in range(data.num_rows)]
        for k in kept:
            k.locations = list(k.locations or [])
        order = sorted(range(len(kept)), key=lambda i: (kept[i].created, kept[i].id))
        self._version = version
        return [kept[i] for i in order], {kept[i].id: matrix[i] for i in order}

    # -- writes ------------------------------------------------------------------------
    def add(self, kept: Kept, vector: np.ndarray) -> bool:
        """Keep ``kept`` (its text redacted); False when its id is kept already."""
        kept.created = kept.created or time.time()
        row = {c: getattr(kept, c) for c in _COLUMNS}
        row["vector"] = np.asarray(vector, dtype=np.float32).tolist()
        with self._locked() as table:
            if table.count_rows(f"id = {quote(kept.id)}"):
                return False
            Store.add(table, [row])
        return True

    def set(self, kept_id: str, **values: object) -> bool:
        """Change ``values`` (pinned, superseded_by, forgotten) of one kept fact; False
        when there is no such id."""
        unknown = set(values) - {"pinned", "superseded_by", "forgotten"}
        if unknown:
            raise ValueError(f"kept facts cannot change {', '.join(sorted(unknown))}")
        with self._locked() as table:
            where = f"id = {quote(kept_id)}"
            if not table.count_rows(where):
                return False
            table.update(where=where, values=values)
        return True
