"""The few git facts engram needs, through GitPython.

The repository's root, HEAD and branch, every file's content signature for the
index's incremental refresh, and a file's blob id for the ``cards`` staleness watch.
GitPython runs the git command line underneath (the commands of every index refresh run
it directly); its errors become ``NotAGitRepo`` or an empty answer here, never a
traceback for the user.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")  # a missing git is reported by use

if TYPE_CHECKING:
    import git

HASH_BATCH = 200  # paths per `git hash-object` call


class NotAGitRepo(ValueError):
    """The folder is not inside a git work tree."""


def _gitpython() -> Any:
    """GitPython, imported at first use: it costs a fifth of a second of CPU, which the
    MCP server's first answer and the per-prompt hook (``toplevel`` only) do without."""
    import git

    return git


def __getattr__(name: str) -> Any:  # PEP 562: ``GitError`` without importing at load
    if name == "GitError":
        return _errors()
    raise AttributeError(name)


def _errors() -> tuple[type[BaseException], ...]:
    return (_gitpython().GitError, OSError, ValueError)


def _repo(root: Path) -> git.Repo:
    return _gitpython().Repo(root)


def _run(root: Path, *args: str) -> str:
    """``git ARGS`` in ``root``: its standard output, as it is (decoded as GitPython
    does). The command line is run directly, as ``toplevel`` does: every index refresh
    runs these, and importing GitPython was a quarter of a no-change reopen's CPU
    (0.13-0.18 s); a failure is GitPython's ``GitCommandError`` all the same."""
    argv = ["git", *args]
    done = subprocess.run(argv, cwd=root, stdin=subprocess.DEVNULL, capture_output=True)
    if done.returncode != 0:
        raise _gitpython().GitCommandError(argv, done.returncode, done.stderr)
    return done.stdout.decode("utf-8", "surrogateescape")


def toplevel(path: Path) -> Path:
    """The root of the work tree holding ``path``; ``NotAGitRepo`` if there is none."""
    if not path.exists():
        raise NotAGitRepo(f"no such folder: {path}")
    if not path.is_dir():
        raise NotAGitRepo(f"not a folder: {path}")
    try:  # the git command line itself: no GitPython on this path
        done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NotAGitRepo(f"git could not be run in {path}: {exc}") from exc
    if done.returncode != 0:
        if "work tree" in done.stderr:
            raise NotAGitRepo(f"not a git work tree (a bare repository): {path}")
        raise NotAGitRepo(f"not a git repository: {path} (run `git init` there first)")
    return Path(done.stdout.rstrip("\n")).resolve()


def head(root: Path) -> str:
    """HEAD's commit sha, or '' in a repository without commits."""
    try:
        return _repo(root).head.commit.hexsha
    except _errors():
        return ""


def branch(root: Path) -> str:
    """The checked-out branch, 'HEAD' when detached, '' when unknown."""
    try:
        repo = _repo(root)
        return "HEAD" if repo.head.is_detached else repo.active_branch.name
    except (*_errors(), TypeError):
        return ""


def blob_id(root: Path, path: str) -> str:
    """The blob id of ``path``'s content in the work tree now ('' when unreadable)."""
    try:
        return _run(root, "hash-object", "--", path).strip()
    except _errors():
        return ""


def _split(out: str) -> list[str]:
    return [p for p in out.split("\0") if p]


def file_signatures(root: Path) -> dict[str, str]:
    """Every file git tracks or would track (not ignored), with a content signature.

    Tracked, unmodified files: their blob id from the index. Tracked files changed
    in the work tree: the blob id of their current content. Untracked files: their
    mtime and size. Tracked files deleted from the work tree are left out.
    """
    signatures: dict[str, str] = {}
    for line in _split(_run(root, "ls-files", "-s", "-z")):
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) >= 2 and parts[0] != "160000":  # skip submodules
            signatures[path] = "blob:" + parts[1]
    modified = [p for p in _split(_run(root, "diff", "--name-only", "-z")) if p in signatures]
    present = [p for p in modified if (root / p).is_file()]
    for p in set(modified) - set(present):
        signatures.pop(p, None)
    for start in range(0, len(present), HASH_BATCH):  # a bounded command line
        batch = present[start:start + HASH_BATCH]
        ids = _run(root, "hash-object", "--", *batch).split()
        for path, blob in zip(batch, ids, strict=False):
            signatures[path] = "blob:" + blob
    for path in _split(_run(root, "ls-files", "-z", "--others", "--exclude-standard")):
        try:
            stat = (root / path).stat()
        except OSError:
            continue
        signatures[path] = f"mtime:{stat.st_mtime_ns}:{stat.st_size}"
    return signatures
