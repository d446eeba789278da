"""``list_files``: the repository's files (tracked, and untracked ones git does not
ignore), filtered by a glob; at most ``MAX_FILES`` names."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from memory.acting.toolloop import Tool, ToolResult
from memory.acting.tools._git import GitFailed, files
from memory.acting.tools.grep import bad_glob

MAX_FILES = 300

TOOL = Tool("list_files", "list the repository's files whose path matches a glob ('' for "
            "all, '*.py' at any depth, 'tests/*').", {"glob": {"type": "string"}})


def matches(path: str, glob: str) -> bool:
    if not glob:
        return True
    if "/" not in glob:
        return fnmatchcase(PurePosixPath(path).name, glob)
    return fnmatchcase(path, glob.lstrip("/")) or fnmatchcase(path, glob.rstrip("*") + "*")


def list_files(root: Path, glob: str = "") -> ToolResult:
    glob = glob.strip()
    if why := bad_glob(glob):
        return ToolResult(f"Refused: {why}.", ok=False)
    try:
        names = [n for n in files(root) if matches(n, glob)]
    except GitFailed as exc:
        return ToolResult(f"Cannot list files: {exc}", ok=False)
    where = f" matching {glob!r}" if glob else ""
    if not names:
        return ToolResult(f"No file{where}.")
    head = f"{len(names)} files{where}"
    if len(names) > MAX_FILES:
        head += f"; the first {MAX_FILES} shown: narrow the glob"
    return ToolResult(head + ":\n" + "\n".join(names[:MAX_FILES]))
