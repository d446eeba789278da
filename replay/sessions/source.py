"""A recorded session as a source: the user turns of an engram transcript, or of a Claude
Code, Codex CLI or Aider session (``replay.sessions.foreign``: tool calls and results kept
as each turn's context, not as turns)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory.transcript import read_transcript
from replay.core.errors import SourceError
from replay.core.names import safe_name
from replay.sessions.foreign import ForeignError, read_foreign


@dataclass(frozen=True)
class Recorded:
    id: str
    queries: tuple[str, ...]
    repo: str
    kind: str = "recorded"
    origin: str = "engram"  # or the tool whose session this is: claude-code, codex, aider
    context: tuple[tuple[str, ...], ...] = ()  # per query: tool calls/results that followed
    skipped: int = 0  # records skipped while reading (malformed or unknown)


def load_recorded(path: Path) -> Recorded:
    reading = read_transcript(path)
    turns = reading.turns
    if not turns:
        raise SourceError(f"{path}: no turns to replay (skipped lines: {len(reading.problems)})")
    session = reading.session
    queries = tuple(t.user for t in sorted(turns, key=lambda t: t.index) if t.user.strip())
    return Recorded(session.id if session else path.stem, queries,
                    session.repo if session else "")


def load_foreign(path: Path, tool: str) -> Recorded:
    try:
        session = read_foreign(path, tool)
    except (ForeignError, OSError) as exc:
        raise SourceError(str(exc)) from exc
    origin = f"{tool} {session.version}".strip()
    return Recorded(safe_name(session.id), tuple(session.queries), session.repo,
                    origin=origin, context=tuple(tuple(c) for c in session.context),
                    skipped=session.skipped)
