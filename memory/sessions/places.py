"""Where each tool keeps a repository's sessions (``engram memory ingest auto``).

- Claude Code: ``~/.claude/projects/<the project's path with / and . replaced by ->/*.jsonl``
  (``$CLAUDE_CONFIG_DIR`` instead of ``~/.claude`` when set); a session started in a
  folder of the repository has a project folder of its own, taken when its ``cwd`` is
  inside the repository.
- Codex CLI: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME`` instead of
  ``~/.codex``) whose ``session_meta`` names a ``cwd`` inside the repository.
- Aider: ``.aider.chat.history.md`` in the repository.
- engram: its own transcripts, ``sessions/`` of the repository's data dir
  (``memory/home.py``), except those an ingest wrote.

``~`` is ``$HOME`` (``Path.home``), so a test points it at a folder of its own.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

TOOLS = ("claude", "codex", "aider", "engram")
TOOL_NAMES = {"claude": "claude-code", "codex": "codex", "aider": "aider", "engram": "engram"}
HEAD_LINES = 20  # lines of a session read to find where it ran


def claude_dir() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def codex_dir() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


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
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for _, line in zip(range(HEAD_LINES), fh, strict=False):
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if not isinstance(row, dict):
                    continue
                payload = row.get("payload")
                found = row.get("cwd") or (payload.get("cwd") if isinstance(payload, dict)
                                           else None)
                if found:
                    return str(found)
    except OSError:
        return ""
    return ""


def claude_sessions(root: Path) -> list[Path]:
    projects = claude_dir() / "projects"
    if not projects.is_dir():
        return []
    name = claude_project(root)
    found: list[Path] = []
    for folder in sorted(projects.iterdir()):
        if folder.name == name:
            found += sorted(folder.glob("*.jsonl"))
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
