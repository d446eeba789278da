"""Where an ingest stopped in each session file: the file's identity and the byte offset
after the last line taken, kept in ``ingest/marks.json`` of the repository's data dir
(written whole to a temporary file, then renamed: a crash leaves the old marks). Two
ingests of one repository at once (a ``--watch`` and a run by hand) take turns: each
feeds a file under an exclusive lock on ``ingest/lock`` and reads the marks again first."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

HEAD_BYTES = 4096  # of a file's start, hashed into its identity


@dataclass
class Mark:
    """One file, for one backend: ``identity`` (device, inode and a hash of its first
    ``head`` bytes), ``offset`` (its bytes before it are taken), the engram session its
    turns went to, and how many turns."""

    file: str
    tool: str
    backend: str
    identity: str
    head: int
    offset: int
    session: str
    turns: int = 0


def identity(path: Path, head: int) -> str:
    stat = path.stat()
    with path.open("rb") as fh:
        digest = hashlib.sha1(fh.read(head)).hexdigest()[:16]
    return f"{stat.st_dev}:{stat.st_ino}:{digest}"


def same_file(mark: Mark, path: Path) -> bool:
    """Whether ``path`` is still the file ``mark`` was taken from: same inode, at least as
    long, the same first bytes (a file replaced or rewritten is a new one)."""
    try:
        if path.stat().st_size < mark.offset:
            return False
        return identity(path, mark.head) == mark.identity
    except OSError:
        return False


class Marks:
    def __init__(self, home: Path) -> None:
        self.path = Path(home) / "ingest" / "marks.json"
        self.marks: dict[str, Mark] = {}
        self.load()

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the repository's ingest lock, with the marks read again under it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with (self.path.parent / "lock").open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                self.load()
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def load(self) -> None:
        self.marks = {}
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
        for key, value in (data.get("marks", {}) if isinstance(data, dict) else {}).items():
            try:
                self.marks[key] = Mark(**value)
            except TypeError:
                continue  # a mark of another version: the file is taken from its start

    @staticmethod
    def key(backend: str, path: Path) -> str:
        return f"{backend}:{Path(path).resolve()}"

    def get(self, backend: str, path: Path) -> Mark | None:
        return self.marks.get(self.key(backend, path))

    def put(self, mark: Mark) -> None:
        self.marks[self.key(mark.backend, Path(mark.file))] = mark
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"marks": {k: asdict(m) for k, m in self.marks.items()}},
                                  indent=1, sort_keys=True), "utf-8")
        os.replace(tmp, self.path)
