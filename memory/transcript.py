"""Session recording: one JSON object per line, fsync'd per record, read tolerantly.

Record types: ``session``, ``turn``, ``switch``, ``memory``, ``ab``. A ``memory`` record
with ``by: "user"`` is the developer's steering (memory/steering.py): ``op`` pin | unpin |
forget | edit, ``id``, ``text``, ``kind`` (pin), ``old`` (edit) and ``after`` (the number of
turns the session had then); a turn's context entries may carry ``pinned: true``. Secrets
(API-key values from the environment, token-shaped strings) are redacted before
anything is written.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORD_TYPES = frozenset({"session", "turn", "switch", "memory", "ab"})
REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)
_SECRET_SHAPES = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic style keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|(?i:bearer)\s+[A-Za-z0-9._\-]{20,})"
)


def secret_values(env: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables named like secrets (long enough to be real)."""
    env = dict(os.environ) if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return _SECRET_SHAPES.sub(REDACTED, text)


def _redact_obj(obj: Any, secrets: list[str]) -> Any:
    if isinstance(obj, str):
        return redact(obj, secrets)
    if isinstance(obj, dict):
        return {k: _redact_obj(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_redact_obj(v, secrets) for v in obj]
    return obj


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


class TranscriptWriter:
    """Appends records to a JSONL file; each record is flushed and fsync'd."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._secrets = secret_values()
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
        clean = _redact_obj(record, self._secrets)
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
    """What a transcript file held: the good records and what was skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def session(self) -> dict[str, Any] | None:
        return next((r for r in self.records if r["type"] == "session"), None)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["type"] == kind]


def read_transcript(path: Path) -> Transcript:
    """Read every intact record; torn or corrupt lines are skipped and reported."""
    result = Transcript()
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        torn = number == len(lines)  # no newline after it: the writer stopped mid-line
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            why = "torn last line" if torn else f"corrupt line ({type(exc).__name__})"
            result.problems.append(f"{path}:{number}: skipped {why}")
            continue
        if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
            result.problems.append(f"{path}:{number}: skipped line that is not a record")
            continue
        result.records.append(record)
    return result


def sessions_dir(repo_home: Path) -> Path:
    return repo_home / "sessions"


def latest_session(repo_home: Path) -> Path | None:
    files = sorted(sessions_dir(repo_home).glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return files[-1] if files else None
