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
(``fcntl.flock``: released by the kernel when a process dies).

Readers take no lock and, most of the time, no LanceDB: importing lancedb costs seconds of
CPU, too much for a per-prompt hook or a server's first answer. Every write changes the
generation token in ``cards_kept.gen`` (before and after the write, so a writer that dies
midway still invalidates), and a reader that loaded the table leaves a snapshot of the rows
and vectors it read (``cards_kept.snapshot.npz``) labelled with the generation it read at.
``changed()`` compares tokens; ``load()`` takes the snapshot while its generation is current
and the table otherwise (a cache: deleting it loses nothing).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memory.store import Store, in_list, quote

KEPT_TABLE = "cards_kept"
LOCK_FILE = "cards_kept.lock"
GENERATION_FILE = "cards_kept.gen"
SNAPSHOT_FILE = "cards_kept.snapshot.npz"
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
        self.generation_path = home / GENERATION_FILE
        self.snapshot_path = home / SNAPSHOT_FILE
        self._store: Store | None = None
        self._table: Any = None
        self._generation: str | None = None  # the generation last read (None: never)

    # -- access ------------------------------------------------------------------------
    def _open(self) -> Any:
        """The table (made by the first write, which holds the lock)."""
        if self._table is None:
            try:
                self._store = Store(self.home / "index.lance")
                self._table = self._store.table(KEPT_TABLE, _schema(self.dim))
            except Exception as exc:  # lance raises OSError, ValueError, RuntimeError...
                raise KeptStoreError(f"the memory store under {self.home} cannot be "
                                     f"opened: {exc}") from exc
        return self._table

    def generation(self) -> str:
        """The token the last write left ('' before any)."""
        try:
            return self.generation_path.read_text("ascii").strip()
        except (OSError, UnicodeDecodeError):
            return ""

    def _bump(self) -> None:
        tmp = self.generation_path.with_name(f"{GENERATION_FILE}.{os.getpid()}.tmp")
        tmp.write_text(uuid.uuid4().hex, "ascii")
        tmp.replace(self.generation_path)

    @contextmanager
    def _locked(self) -> Iterator[Any]:
        """The table, with the write lock held, at its latest version."""
        self.home.mkdir(parents=True, exist_ok=True)
        with self.lock_path.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._bump()
                table = self._open()
                table.checkout_latest()
                yield table
                self._bump()
                table.checkout_latest()  # readers find the rows as this write left them
                self._save_snapshot(self.generation(), *self._read(table))
            except KeptStoreError:
                raise
            except Exception as exc:
                raise KeptStoreError(f"the memory store under {self.home} could not be "
                                     f"written: {exc}") from exc
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def changed(self) -> bool:
        """Whether any process wrote since this one last read (``load``)."""
        return self._generation is None or self.generation() != self._generation

    def load(self) -> tuple[list[Kept], dict[str, np.ndarray]]:
        """Every kept fact (oldest first) and their vectors."""
        generation = self.generation()
        if not generation:  # every write leaves one: nothing was ever kept here
            self._generation = generation
            return [], {}
        snapshot = self._snapshot(generation)
        if snapshot is not None:
            self._generation = generation
            return snapshot
        try:
            table = self._open()
            table.checkout_latest()
            rows, vectors = self._read(table)
        except KeptStoreError:
            raise
        except Exception as exc:
            raise KeptStoreError(f"the memory store under {self.home} cannot be read: "
                                 f"{exc}") from exc
        self._generation = generation
        self._save_snapshot(generation, rows, vectors)
        return rows, vectors

    def _read(self, table: Any) -> tuple[list[Kept], dict[str, np.ndarray]]:
        if table.count_rows() == 0:
            return [], {}
        data = table.search().select([*_COLUMNS, "vector"]).limit(None).to_arrow()
        columns = {c: data.column(c).to_pylist() for c in _COLUMNS}
        vectors = data.column("vector").combine_chunks()
        matrix = vectors.values.to_numpy(zero_copy_only=False).astype(np.float32)
        matrix = matrix.reshape(-1, self.dim)
        kept = [Kept(**{c: columns[c][i] for c in _COLUMNS}) for i in range(data.num_rows)]
        for k in kept:
            k.locations = list(k.locations or [])
        order = sorted(range(len(kept)), key=lambda i: (kept[i].created, kept[i].id))
        return [kept[i] for i in order], {kept[i].id: matrix[i] for i in order}

    # -- the readers' snapshot -----------------------------------------------------------
    def _snapshot(self, generation: str) -> tuple[list[Kept], dict[str, np.ndarray]] | None:
        """The rows as a reader left them at ``generation``; None when there is none, it
        is of another generation or it cannot be read."""
        try:
            with np.load(self.snapshot_path, allow_pickle=False) as data:
                if str(data["generation"]) != generation or not generation:
                    return None
                rows = [Kept(**r) for r in json.loads(str(data["rows"]))]
                matrix = np.asarray(data["vectors"], dtype=np.float32).reshape(-1, self.dim)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if len(rows) != len(matrix):
            return None
        return rows, {r.id: matrix[i] for i, r in enumerate(rows)}

    def _save_snapshot(self, generation: str, rows: list[Kept],
                       vectors: dict[str, np.ndarray]) -> None:
        if not generation:
            return  # nothing written yet (or by a version without generations)
        matrix = np.stack([vectors[r.id] for r in rows]) if rows else \
            np.zeros((0, self.dim), dtype=np.float32)
        tmp = self.snapshot_path.with_name(f"{SNAPSHOT_FILE}.{os.getpid()}.tmp.npz")
        try:
            np.savez(tmp, generation=np.array(generation),
                     rows=np.array(json.dumps([{c: getattr(r, c) for c in _COLUMNS}
                                               for r in rows], ensure_ascii=False)),
                     vectors=matrix.astype(np.float32))
            tmp.replace(self.snapshot_path)
        except OSError:  # a cache: the next reader loads the table again
            tmp.unlink(missing_ok=True)

    # -- writes ------------------------------------------------------------------------
    def add(self, kept: Kept, vector: np.ndarray) -> bool:
        """Keep ``kept`` (its text redacted); False when its id is kept already."""
        return self.add_many([(kept, vector)]) == 1

    def add_many(self, items: list[tuple[Kept, np.ndarray]]) -> int:
        """Keep each fact whose id is not kept yet, in one write; how many were new."""
        rows = []
        for kept, vector in items:
            kept.created = kept.created or time.time()
            row = {c: getattr(kept, c) for c in _COLUMNS}
            row["vector"] = np.asarray(vector, dtype=np.float32).tolist()
            rows.append(row)
        with self._locked() as table:
            ids = [r["id"] for r in rows]
            have = {r["id"] for r in Store.rows(table, ["id"], in_list("id", ids))} \
                if ids else set()
            new = [r for r in rows if r["id"] not in have]
            new = list({r["id"]: r for r in new}.values())
            Store.add(table, new)
        return len(new)

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
