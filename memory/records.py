"""Transcript records as typed values: what a line must hold before anything uses it.

``parse_record`` turns one decoded JSON value into a ``SessionRecord``, ``TurnRecord``,
``SwitchRecord``, ``MemoryRecord``, ``ABRecord``, ``ToolRecord`` or ``EditRecord``, or
raises ``RecordError`` saying which field is wrong. Fields engram does not know are kept
in ``data`` (the object as read) and never used. Every record keeps ``data`` for listings and tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory import _checks as check
from memory._checks import RecordError
from memory.types import Turn

RECORD_TYPES = frozenset({"session", "turn", "switch", "memory", "ab", "tool", "edit"})


@dataclass(frozen=True)
class SessionRecord:
    """Who recorded the session, on what: written once, first."""

    id: str
    repo: str = ""
    head: str = ""
    engram: str = ""
    model: str = ""
    backend: str = ""
    started: float | None = None
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "session"


@dataclass(frozen=True)
class TurnRecord:
    turn: Turn
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "turn"


@dataclass(frozen=True)
class SwitchRecord:
    """The backend changed from ``source`` to ``to`` before turn ``turn``."""

    source: str
    to: str
    turn: int | None = None
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "switch"


@dataclass(frozen=True)
class MemoryRecord:
    """One memory operation of a backend (ADD, UPDATE, ..., skipped, error)."""

    backend: str
    op: str
    id: str = ""
    text: str = ""
    turn: int | None = None
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "memory"


@dataclass(frozen=True)
class ABRecord:
    """Two answers compared side by side, and the one kept (``choice``)."""

    backends: tuple[str, ...]
    answers: tuple[str, ...]
    choice: int | None = None
    turn: int | None = None
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "ab"


@dataclass(frozen=True)
class ToolRecord:
    """One call of a turn's tool loop (memory/acting/toolloop.py), written when it finished:
    the turn it was for, its step, the function, its arguments, whether it worked and
    its output (as kept); ``data`` holds the rest (consent, exit status, seconds)."""

    turn: int
    step: int
    function: str
    args: dict[str, Any]
    ok: bool
    result: str = ""
    backend: str = ""
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "tool"


@dataclass(frozen=True)
class EditRecord:
    """A step of an answer's edits (memory/acting/workbench.py): ``op`` proposed | applied |
    rejected | undone | refused, the turn, the paths, whether it worked, its message,
    the diff (proposed) and the commit (applied, undone)."""

    op: str
    turn: int | None
    paths: tuple[str, ...]
    ok: bool
    message: str = ""
    diff: str = ""
    commit: str = ""
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    type: str = "edit"


Record = (SessionRecord | TurnRecord | SwitchRecord | MemoryRecord | ABRecord | ToolRecord
          | EditRecord)


def parse_record(value: Any) -> Record:
    """The typed record ``value`` (a decoded JSON line) holds; ``RecordError`` if none."""
    if not isinstance(value, dict):
        raise RecordError(f"not a record (a JSON {type(value).__name__}, not an object)")
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in RECORD_TYPES:
        raise RecordError(f"not a record (type {str(kind)[:40]!r})")
    check.shallow(value)
    return _PARSERS[kind](value)


def _session(data: dict[str, Any]) -> SessionRecord:
    started = None if data.get("started") is None else check.timestamp(data, "started")
    return SessionRecord(
        id=check.check_session_id(check.text(data, "id")),
        repo=check.text(data, "repo", ""), head=check.text(data, "head", ""),
        engram=check.text(data, "engram", ""), model=check.text(data, "model", ""),
        backend=check.text(data, "backend", ""), started=started, data=data)


def _turn(data: dict[str, Any]) -> TurnRecord:
    return TurnRecord(Turn.from_record(data), data)


def _switch(data: dict[str, Any]) -> SwitchRecord:
    return SwitchRecord(check.text(data, "from"), check.text(data, "to"),
                        check.optional_integer(data, "turn"), data)


def _memory(data: dict[str, Any]) -> MemoryRecord:
    # the developer's steering (memory/turn/steering.py) carries these too
    check.optional_text(data, "by"), check.optional_text(data, "kind")
    check.optional_text(data, "old")
    if check.optional_integer(data, "after") is not None and data["after"] < 0:
        raise RecordError("'after' is negative")
    return MemoryRecord(check.text(data, "backend"), check.text(data, "op"),
                        check.text(data, "id", ""), check.text(data, "text", ""),
                        check.optional_integer(data, "turn"), data)


def _ab(data: dict[str, Any]) -> ABRecord:
    backends, answers = check.strings(data, "backends"), check.strings(data, "answers")
    choice = check.optional_integer(data, "choice")
    if len(backends) != len(answers) or (choice is not None and choice >= len(answers)):
        raise RecordError("'backends', 'answers' and 'choice' do not agree")
    return ABRecord(tuple(backends), tuple(answers), choice,
                    check.optional_integer(data, "turn"), data)


def _tool(data: dict[str, Any]) -> ToolRecord:
    ok = data.get("ok", True)
    if not isinstance(ok, bool):
        raise RecordError("'ok' must be true or false")
    return ToolRecord(check.integer(data, "turn"), check.integer(data, "step"),
                      check.text(data, "function"), check.obj(data, "args"), ok,
                      check.text(data, "result", ""), check.text(data, "backend", ""), data)


def _edit(data: dict[str, Any]) -> EditRecord:
    ok = data.get("ok", True)
    if not isinstance(ok, bool):
        raise RecordError("'ok' must be true or false")
    paths = check.strings(data, "paths") if data.get("paths") is not None else []
    return EditRecord(check.text(data, "op"), check.optional_integer(data, "turn"),
                      tuple(paths), ok, check.text(data, "message", ""),
                      check.text(data, "diff", ""), check.text(data, "commit", ""), data)


_PARSERS = {"session": _session, "turn": _turn, "switch": _switch, "memory": _memory,
            "ab": _ab, "tool": _tool, "edit": _edit}
