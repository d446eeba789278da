"""Helpers for the edit engine's tests (no tests here): a repository with files, a
byte-for-byte picture of a work tree, and edit blocks written as a model would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ...conftest import git, make_repo

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """A git identity for the commits the engine makes (the tests' git() has its own)."""
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "dev")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "dev@example.com")


def repo(tmp_path: Path, files: dict[str, str | bytes] | None = None) -> Path:
    return make_repo(tmp_path / "repo", files if files is not None else {
        "app/calc.py": CALC, "README.md": "# calc\n", "notes.txt": "keep me\n"})


def block(path: str, search: str, replace: str) -> str:
    return f"@@@ EDIT {path}\n@@@ SEARCH\n{search}\n@@@ REPLACE\n{replace}\n@@@ END\n"


def picture(root: Path) -> dict[str, object]:
    """Every file and folder of the work tree (bytes and mode), the index, HEAD, status."""
    files: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git":
            continue
        if path.is_symlink():
            files[rel.as_posix()] = ("link", os.readlink(path))
        elif path.is_dir():
            files[rel.as_posix()] = "dir"
        else:
            files[rel.as_posix()] = (path.read_bytes(), path.stat().st_mode)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify", "HEAD"],
                          capture_output=True, text=True).stdout
    return {"files": files, "index": git(root, "ls-files", "-s"), "head": head,
            "status": git(root, "status", "--porcelain", "--untracked-files=all")}
