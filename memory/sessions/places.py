"""Where each tool keeps a repository's sessions (``engram memory ingest auto``).

- Claude Code: ``~/.claude/projects/<the project's path with / and . replaced by ->/*.jsonl``
  (``$CLAUDE_CONFIG_DIR`` instead of ``~/.claude`` when set); a session started in a
  folder of the repository has a project folder of its own, taken when its ``cwd`` is
  inside the repository. Two paths can share a folder name (``my.app`` and ``my-app``):
  a session whose ``cwd`` names a folder outside the repository is never taken.
- Codex CLI: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME`` instead of
  ``~/.codex``) whose ``session_meta`` names a ``cwd`` inside the repository.
- Aider: ``.aider.chat.history.md`` in the repository.
- engram: its own transcripts, ``sessions/`` of the repository's data dir
  (``memory/home.py``), except those an ingest wrote.

``~`` is ``$HOME`` (``Path.home``), so a test points it at a folder of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from memory.sessions.common import head_rows
from memory.settings import current

TOOLS = ("claude", "codex", "aider", "engram")
TOOL_NAMES = {"claude": "claude-code", "codex": "codex", "aider": "aider", "engram": "engram"}
HEAD_LINES = 20  # lines of a session read to find where it ran


def claude_dir() -> Path:
    return Path(current().claude_dir or Path.home() / ".claude")


def codex_dir() -> Path:
    return Path(current().codex_dir or Path.home() / ".codex")


def claude_project(root: Path) -> str:
    """Claude Code's folder name for a project: its path with ``/`` and ``.`` as ``-``."""
    return re.sub(r"[/.]", "-", str(root))


def _inside(cwd: str, root: Path) -> bool:
    if not cwd:
        return False
    try:
        Path(cwd).resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True


def _cwd(path: Path) -> str:
    """The working folder a JSONL session names in its first lines ("" if none)."""
    for row in head_rows(path, HEAD_LINES) or []:
        payload = row.get("payload")
        found = row.get("cwd") or (payload.get("cwd") if isinstance(payload, dict) else None)
        if found:
            return str(found)
    return ""


def claude_sessions(root: Path) -> list[Path]:
    projects = claude_dir() / "projects"
    if not projects.is_dir():
        return []
    name = claude_project(root)
    found: list[Path] = []
    for folder in sorted(projects.iterdir()):
        if folder.name == name:  # another path may map to it too (``my.app``, ``my-app``)
            found += [p for p in sorted(folder.glob("*.jsonl"))
                      if not (cwd := _cwd(p)) or _inside(cwd, root)]
        elif folder.name.startswith(name + "-"):  # a folder inside the repository, maybe
            found += [p for p in sorted(folder.glob("*.jsonl")) if _inside(_cwd(p), root)]
    return found


def codex_sessions(root: Path) -> list[Path]:
    base = codex_dir() / "sessions"
    if not base.is_dir():
        return []
    return [p for p in sorted(base.glob("*/*/*/rollout-*.jsonl")) if _inside(_cwd(p), root)]


def aider_sessions(root: Path) -> list[Path]:
    path = root / ".aider.chat.history.md"
    return [path] if path.is_file() else []


def engram_sessions(home: Path) -> list[Path]:
    """engram's own transcripts of the repository (``home`` its data dir), less those an
    ingest wrote (their session record says ``ingested``)."""
    from memory.transcript import sessions_dir

    found = []
    for path in sorted(sessions_dir(home).glob("*.jsonl")):
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                first = json.loads(fh.readline() or "{}")
        except (OSError, json.JSONDecodeError):
            first = {}
        if not (isinstance(first, dict) and first.get("ingested")):
            found.append(path)
    return found


def find(root: Path, home: Path, tools: tuple[str, ...] = TOOLS) -> list[tuple[Path, str]]:
    """Every session of the repository at ``root`` that the tools keep, as (path, tool)
    with the tool as the readers name it (claude-code, codex, aider, engram)."""
    root = Path(root).resolve()
    found: list[tuple[Path, str]] = []
    for tool in tools:
        paths = {"claude": lambda: claude_sessions(root), "codex": lambda: codex_sessions(root),
                 "aider": lambda: aider_sessions(root),
                 "engram": lambda: engram_sessions(home)}[tool]()
        found += [(p, TOOL_NAMES[tool]) for p in paths]
    return found
