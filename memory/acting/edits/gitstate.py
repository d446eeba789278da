"""The git plumbing the edit engine runs: status of the paths it edits, blob ids,
commits made through a temporary index, moving HEAD with a compare-and-swap.

Every call is ``git -C root ...`` with a bounded time; a failure is ``GitFailed`` with
git's own message (its first lines), which the steps turn into a refusal.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 60.0
TRAILER = "Engram-Edit"  # names the answer; marks the commit as engram's
TREE_TRAILER = "Engram-Tree"  # the tree engram committed: an amended commit differs


class GitFailed(RuntimeError):
    """A git command that failed; the message is git's."""


def run(root: Path, *args: str, data: bytes | None = None,
        env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,),
        literal: bool = True, timeout: float = TIMEOUT) -> bytes:
    """``git ARGS`` in ``root``: its standard output as bytes; paths are literal (no
    globbing) unless ``literal`` is False (check-ignore refuses the option)."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], input=data,
                              capture_output=True, timeout=timeout,
                              env={**os.environ, "GIT_LITERAL_PATHSPECS": "1" if literal else "0",
                                   **(env or {})})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitFailed(f"git {args[0]} did not run: {exc}") from exc
    if done.returncode not in ok:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitFailed(f"git {args[0]} failed: " + " ".join(said[:3]))
    return done.stdout


def text(root: Path, *args: str, **kwargs: object) -> str:
    return run(root, *args, **kwargs).decode("utf-8", "surrogateescape")  # type: ignore[arg-type]


def head(root: Path) -> str:
    """HEAD's commit, '' before the first commit."""
    out = run(root, "rev-parse", "-q", "--verify", "HEAD^{commit}", ok=(0, 1))
    return out.decode().strip()


IN_PROGRESS = {"MERGE_HEAD": "a merge", "CHERRY_PICK_HEAD": "a cherry-pick",
               "REVERT_HEAD": "a revert", "rebase-merge": "a rebase",
               "rebase-apply": "a rebase or git am", "BISECT_LOG": "a bisect"}


def operation_in_progress(root: Path) -> str:
    """The git operation the repository is in the middle of ('' when none)."""
    names = list(IN_PROGRESS)
    args = [arg for name in names for arg in ("--git-path", name)]
    out = text(root, "rev-parse", *args).split("\n")
    for name, where in zip(names, out, strict=False):
        if where and (root / where).exists():
            return IN_PROGRESS[name]
    return ""


def blob_hash(data: bytes, length: int = 40) -> str:
    """The git blob id of ``data`` (SHA-1, or SHA-256 when ``length`` is 64)."""
    algo = hashlib.sha256 if length == 64 else hashlib.sha1
    return algo(b"blob %d\0" % len(data) + data).hexdigest()


def snapshot(root: Path, paths: list[str]) -> dict[str, str]:
    """The blob id of each path's content now (missing files left out): what the model
    is shown, for ``prepare(seen=...)`` to notice a file changed since."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            out[path] = blob_hash((root / path).read_bytes())
        except OSError:
            continue
    return out


def tree_blobs(root: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """The blob id of each of ``paths`` in commit ``rev`` (absent ones left out)."""
    if not paths:
        return {}
    run(root, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}")
    out: dict[str, str] = {}
    for entry in run(root, "ls-tree", "-z", rev, "--", *paths).split(b"\0"):
        if entry:
            meta, _, name = entry.partition(b"\t")
            out[os.fsdecode(name)] = meta.split()[2].decode()
    return out


@dataclass(frozen=True)
class PathState:
    """What git says about one path before it is edited."""

    tracked: bool
    mode: str  # the index's mode, '100644' for an untracked or new file
    status: str  # porcelain XY, '' when clean
    ignored: bool


def states(root: Path, paths: list[str]) -> dict[str, PathState]:
    """Index entries, status and ignore rules for ``paths`` (3 git calls in all)."""
    if not paths:
        return {}
    index: dict[str, str] = {}
    for entry in run(root, "ls-files", "-s", "-z", "--", *paths).split(b"\0"):
        if entry:
            meta, _, name = entry.partition(b"\t")
            index[os.fsdecode(name)] = meta.split()[0].decode()
    status: dict[str, str] = {}
    out = run(root, "status", "--porcelain=v1", "-z", "--untracked-files=all",
              "--no-renames", "--", *paths)
    for entry in out.split(b"\0"):
        if len(entry) > 3:
            status[os.fsdecode(entry[3:])] = entry[:2].decode()
    names = b"".join(os.fsencode(p) + b"\0" for p in paths)
    ignored_out = run(root, "check-ignore", "-z", "--stdin", data=names, ok=(0, 1),
                      literal=False)
    ignored = {os.fsdecode(p) for p in ignored_out.split(b"\0") if p}
    return {p: PathState(p in index, index.get(p, "100644"), status.get(p, ""),
                         p in ignored) for p in paths}


def dirty_reason(state: PathState) -> str:
    """Why a path's uncommitted state forbids editing it ('' when it is clean)."""
    if state.ignored and not state.tracked:
        return "is ignored by git (engram does not edit or commit ignored files)"
    if state.status == "??":
        return "is untracked: it is your uncommitted work; commit it first"
    if state.status:
        return (f"has uncommitted changes (git status '{state.status.strip()}'); "
                "commit or stash them first; nothing was written")
    return ""
