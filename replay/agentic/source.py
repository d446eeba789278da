"""An agentic session to replay: a small JSON file naming a recorded session and what
the replay needs beside it.

```json
{"kind": "agentic",
 "session": "sessions/20260101-120000-abc123.jsonl",
 "repo": "../shop",
 "commit": "3f2a9c1",
 "tests": ["tests/test_cart.py"],
 "id": "cart-fix"}
```

- ``session``: an engram transcript with ``tool`` records, a Claude Code session or a
  Codex CLI rollout (relative paths are relative to this file);
- ``repo``: the repository (default: the one the session recorded; ``--repo`` wins);
- ``commit``: where the replay starts (default: the engram session's ``head``, else the
  repository's HEAD, said in the results);
- ``tests``: the pytest targets of the final verdict (default: every test file git
  tracks, ``test_*.py`` and ``*_test.py``);
- ``id``: the rows' source name (default: the session's id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.transcript import read_transcript
from replay.agentic.calls import ToolLog
from replay.core.errors import SourceError
from replay.core.names import safe_name
from replay.sessions.foreign import ForeignError, read_foreign, sniff

KIND = "agentic"


@dataclass(frozen=True)
class AgenticSession:
    id: str
    queries: tuple[str, ...]
    repo: str  # "" when neither the spec nor the session names it
    log: ToolLog = field(compare=False)
    commit: str = ""  # "": the repository's HEAD
    tests: tuple[str, ...] = ()  # (): the test files git tracks
    origin: str = "engram"  # or claude-code 2.0.61, codex 0.46.0
    skipped: int = 0  # records skipped while reading
    kind: str = KIND


def _text(data: dict[str, Any], key: str, where: Path) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise SourceError(f"{where}: '{key}' must be a string")
    return value.strip()


def _relative(value: str, spec: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else spec.parent / path


def load_spec(spec: Path, data: Any) -> AgenticSession:
    """The session an agentic spec names, with its tool calls; ``SourceError`` saying
    what is wrong (nothing else raised)."""
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise SourceError(f"{spec}: not an agentic replay spec (kind must be '{KIND}')")
    name = _text(data, "session", spec)
    if not name:
        raise SourceError(f"{spec}: 'session' must name the recorded session to replay")
    tests = data.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, str) and t.strip() for t in tests):
        raise SourceError(f"{spec}: 'tests' must be a list of pytest targets")
    path = _relative(name, spec)
    if not path.is_file():
        raise SourceError(f"{spec}: the session {path} is not there")
    tool = sniff(path)
    session = read_foreign_session(path, tool) if tool else read_engram_session(path)
    repo = _text(data, "repo", spec)
    return AgenticSession(
        id=safe_name(_text(data, "id", spec) or session.id), queries=session.queries,
        repo=str(_relative(repo, spec).resolve()) if repo else session.repo,
        log=session.log, commit=_text(data, "commit", spec) or session.commit,
        tests=tuple(t.strip() for t in tests), origin=session.origin,
        skipped=session.skipped)


def read_engram_session(path: Path) -> AgenticSession:
    reading = read_transcript(path)
    turns = sorted((t for t in reading.turns if t.user.strip()), key=lambda t: t.index)
    if not turns:
        raise SourceError(f"{path}: no turns to replay (skipped lines: "
                          f"{len(reading.problems)})")
    positions = {t.index: n for n, t in enumerate(turns)}
    session = reading.session
    log = ToolLog.from_engram(reading.tool_calls, positions)
    log.add_edits(reading.of_type("edit"), positions)
    return AgenticSession(
        id=session.id if session else path.stem, queries=tuple(t.user for t in turns),
        repo=session.repo if session else "", log=log,
        commit=session.head if session else "", skipped=len(reading.problems))


def read_foreign_session(path: Path, tool: str) -> AgenticSession:
    if tool not in ("claude-code", "codex"):
        raise SourceError(f"{path}: a {tool} history records no tool calls to replay; "
                          "replay it as a session (engram replay PATH)")
    try:
        session = read_foreign(path, tool)
    except (ForeignError, OSError) as exc:
        raise SourceError(str(exc)) from exc
    return AgenticSession(
        id=session.id, queries=tuple(session.queries), repo=session.repo,
        log=ToolLog.from_foreign(session.calls, session.repo),
        origin=f"{tool} {session.version}".strip(), skipped=session.skipped)
