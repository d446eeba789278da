"""Session recording: one JSON object per line, fsync'd per record, read tolerantly.

Record types: ``session``, ``turn``, ``switch``, ``memory``, ``ab``, ``tool`` (one call
of a turn's tool loop), ``edit`` (a step of an answer's edits, memory/acting/workbench.py); typed
in ``memory.records``. A ``memory`` record with
``by: "user"`` is the developer's steering (memory/turn/steering.py): ``op`` pin | unpin |
forget | edit, ``id``, ``text``, ``kind`` (pin), ``old`` (edit) and ``after`` (the number
of turns the session had then); a turn's context entries may carry ``pinned: true``.
Secrets are redacted (``memory.redact``) before anything is written.
"""

from __future__ import annotations

import codecs
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory._checks import RecordError, check_session_id
from memory.records import (
    RECORD_TYPES,
    ABRecord,
    EditRecord,
    MemoryRecord,
    Record,
    SessionRecord,
    SwitchRecord,
    ToolRecord,
    TurnRecord,
    parse_record,
)
from memory.redact import redact_obj
from memory.types import Turn

MAX_LINE_BYTES = 16 * 1024**2  # a longer line is not a record engram wrote


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


class TranscriptWriter:
    """Appends records to a JSONL file; each record is flushed and fsync'd."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._end_torn_line()
        self._fh = self.path.open("a", encoding="utf-8")

    def _end_torn_line(self) -> None:
        """A file whose last line was torn (a crash mid-write) gets its newline first, so
        the next record starts a line of its own instead of merging into the fragment."""
        try:
            with self.path.open("rb+") as fh:
                if fh.seek(0, os.SEEK_END) == 0:
                    return
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")
                    fh.flush()
                    os.fsync(fh.fileno())
        except FileNotFoundError:
            pass

    def write(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind not in RECORD_TYPES:
            raise ValueError(f"unknown transcript record type {kind!r}")
        clean = redact_obj(record)  # the environment's secrets as they are now
        line = json.dumps(clean, ensure_ascii=False, separators=(",", ":"))
        self._fh.write(line + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Transcript:
    """What a transcript file held: its valid records, typed, and what was skipped (one
    problem per skipped line, with its line number)."""

    records: list[Record] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def session(self) -> SessionRecord | None:
        return next((r for r in self.records if isinstance(r, SessionRecord)), None)

    @property
    def turns(self) -> list[Turn]:
        return [r.turn for r in self.records if isinstance(r, TurnRecord)]

    @property
    def switches(self) -> list[SwitchRecord]:
        return [r for r in self.records if isinstance(r, SwitchRecord)]

    @property
    def memories(self) -> list[MemoryRecord]:
        return [r for r in self.records if isinstance(r, MemoryRecord)]

    @property
    def tool_calls(self) -> list[ToolRecord]:
        return [r for r in self.records if isinstance(r, ToolRecord)]

    @property
    def edits(self) -> list[EditRecord]:
        return [r for r in self.records if isinstance(r, EditRecord)]

    @property
    def comparisons(self) -> list[ABRecord]:
        return [r for r in self.records if isinstance(r, ABRecord)]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The validated records of one type, as the objects they were read from."""
        return [r.data for r in self.records if r.type == kind]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_line(raw: bytes) -> Record:
    """The record one line holds; ``RecordError`` saying why not (never another error)."""
    if len(raw) > MAX_LINE_BYTES:
        raise RecordError(f"line of {len(raw)} bytes (more than {MAX_LINE_BYTES})")
    try:
        value = json.loads(raw.removeprefix(codecs.BOM_UTF8).decode("utf-8"),
                           parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 (byte {exc.start})") from exc
    except RecursionError as exc:
        raise RecordError("nested too deeply to parse") from exc
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, an integer too long
        raise RecordError(f"not JSON ({str(exc)[:80]})") from exc
    return parse_record(value)


def read_transcript(path: Path) -> Transcript:
    """Read every valid record; a torn, corrupt or ill-typed line is skipped and reported
    with its line number. Never raises: an unreadable file is one problem."""
    result = Transcript()
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        result.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        return result
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            result.records.append(parse_line(raw))
        except RecordError as exc:
            torn = number == len(lines)  # no newline after it: the writer stopped mid-line
            why = "torn last line" if torn else "corrupt line"
            result.problems.append(f"{path}:{number}: skipped {why}: {exc}")
    return result


@dataclass(frozen=True)
class Resumed:
    """What continuing a recorded session needs from its transcript."""

    session_id: str
    turns: list[Turn]
    backend: str | None  # the backend the session ended on (None: not recorded)
    model: str | None
    problems: list[str]


def resume_from(path: Path) -> Resumed:
    """The session recorded at ``path``; ``RecordError`` when it has no valid session id
    (neither its session record nor its file name gives one)."""
    transcript = read_transcript(path)
    session = transcript.session
    session_id = session.id if session is not None else check_session_id(Path(path).stem)
    switches = transcript.switches
    backend = switches[-1].to if switches else (session.backend if session else "")
    model = session.model if session else ""
    return Resumed(session_id, transcript.turns, backend or None, model or None,
                   transcript.problems)


def sessions_dir(repo_home: Path) -> Path:
    return repo_home / "sessions"


def latest_session(repo_home: Path) -> Path | None:
    files = sorted(sessions_dir(repo_home).glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return files[-1] if files else None
