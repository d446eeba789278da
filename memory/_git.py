"""The few git facts engram needs, from the git command line."""

from __future__ import annotations

import subprocess
from pathlib import Path


class NotAGitRepo(ValueError):
    """The folder is not inside a git work tree."""


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(
        ["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False,
        timeout=120,
    )
    if result.returncode != 0:
        raise subprocess.CalledProcessError(result.returncode, args, result.stdout,
                                            result.stderr)
    return result.stdout


def toplevel(path: Path) -> Path:
    """The root of the work tree holding ``path``; ``NotAGitRepo`` if there is none."""
    if not path.exists():
        raise NotAGitRepo(f"no such folder: {path}")
    if not path.is_dir():
        raise NotAGitRepo(f"not a folder: {path}")
    try:
        out = _git(path, "rev-parse", "--show-toplevel")
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        raise NotAGitRepo(f"not a git repository: {path} (run `git init` there first)") from exc
    return Path(out.decode().strip()).resolve()


def head(root: Path) -> str:
    """HEAD's commit sha, or '' in a repository without commits."""
    try:
        return _git(root, "rev-parse", "HEAD").decode().strip()
    except subprocess.CalledProcessError:
        return ""


def branch(root: Path) -> str:
    try:
        return _git(root, "rev-parse", "--abbrev-ref", "HEAD").decode().strip()
    except subprocess.CalledProcessError:
        return ""


def _split(out: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def file_signatures(root: Path) -> dict[str, str]:
    """Every file git tracks or would track (not ignored), with a content signature.

    Tracked, unmodified files: their blob id from the index. Tracked files changed
    in the work tree: the blob id of their current content. Untracked files: their
    mtime and size. Tracked files deleted from the work tree are left out.
    """
    signatures: dict[str, str] = {}
    for line in _split(_git(root, "ls-files", "-s", "-z")):
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) >= 2 and parts[0] != "160000":  # skip submodules
            signatures[path] = "blob:" + parts[1]
    modified = [p for p in _split(_git(root, "diff", "--name-only", "-z")) if p in signatures]
    present = [p for p in modified if (root / p).is_file()]
    for p in set(modified) - set(present):
        signatures.pop(p, None)
    if present:
        ids = _git(root, "hash-object", "--stdin-paths",
                   stdin="\n".join(present).encode()).decode().split()
        for path, blob in zip(present, ids, strict=False):
            signatures[path] = "blob:" + blob
    for path in _split(_git(root, "ls-files", "-z", "--others", "--exclude-standard")):
        try:
            stat = (root / path).stat()
        except OSError:
            continue
        signatures[path] = f"mtime:{stat.st_mtime_ns}:{stat.st_size}"
    return signatures
