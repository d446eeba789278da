"""What each step of the edit engine returns: data with a message, never an exception
for an expected refusal (a block that does not parse or apply, a dirty file, an undo
that is not safe)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Edit:
    """One block of an answer: replace ``search`` by ``replace`` in ``path``.

    ``search`` and ``replace`` are whole lines joined by newlines, without a final
    newline; an empty ``search`` creates the file. ``block`` counts from 1 in the answer.
    """

    path: str
    search: str
    replace: str
    block: int


@dataclass(frozen=True)
class Problem:
    """Why one block (or the answer as a whole, ``block`` 0) does not apply."""

    block: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"block {self.block}" if self.block else "answer"
        return f"{where}{f' ({self.path})' if self.path else ''}: {self.message}"


@dataclass(frozen=True)
class Parsed:
    """The edits found in an answer and the blocks that could not be read."""

    edits: tuple[Edit, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class FileChange:
    """One file's content before and after an answer (``before`` None: a new file)."""

    path: str
    before: bytes | None
    after: bytes
    mode: str
    diff: str
    notes: tuple[str, ...] = ()


@dataclass
class Prepared:
    """An answer checked against the work tree, nothing written yet.

    ``ok``: every block applies, and ``changes`` holds each file once with its diff;
    otherwise ``problems`` says why and ``changes`` is empty (all or nothing).
    """

    ok: bool
    message: str
    root: Path
    changes: list[FileChange] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    head: str = ""

    @property
    def diff(self) -> str:
        return "".join(change.diff for change in self.changes)

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.changes]


@dataclass(frozen=True)
class Applied:
    """The result of writing and committing a prepared answer; ``index_error`` says why the
    repository index could not catch up with it (the commit stands)."""

    ok: bool
    message: str
    commit: str = ""
    paths: tuple[str, ...] = ()
    index_error: str = ""


@dataclass(frozen=True)
class Undone:
    """The result of reverting engram's last commit; ``index_error`` says why the
    repository index could not catch up with it (the commit stands)."""

    ok: bool
    message: str
    commit: str = ""
    paths: tuple[str, ...] = ()
    index_error: str = ""
