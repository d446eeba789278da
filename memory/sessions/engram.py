"""engram's own transcripts (``memory/transcript.py``) in the readers' shape, for
``engram memory ingest --from engram``: each successful ``turn`` record is a closed turn."""

from __future__ import annotations

from pathlib import Path

from memory.records import RecordError
from memory.sessions.common import Session, json_rows
from memory.types import Turn


def read_engram(path: Path, complete_only: bool = False) -> Session:
    session = Session("engram", path.stem)
    for row in json_rows(path, session, complete_only):
        kind = row.get("type")
        if kind == "session":
            session.id = str(row.get("id") or session.id)
            session.repo = str(row.get("repo") or "")
            session.version = str(row.get("engram") or "")
        elif kind == "turn":
            try:
                turn = Turn.from_record(row)
            except (RecordError, ValueError):
                session.skipped += 1
                continue
            if turn.ok and turn.user.strip():
                session.ask(turn.user.strip())
                session.say(turn.assistant)
                session.close()
    return session
