"""Undo engram's last applied answer: HEAD moves back to its parent and the files it
changed get their earlier bytes back.

Refused, with nothing touched, when HEAD is not a commit engram made (its trailer), is a
merge, is already on a remote branch, or when any file it changed differs now (in the
work tree or the index) from what the commit holds: that would be the developer's work.
Other files, staged or not, are never touched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from memory import _git
from memory.redact import redact

from . import gitstate
from .commit import _prune_dirs, _write
from .gitstate import TRAILER, TREE_TRAILER, GitFailed
from .results import Undone

TRAILER_LINE = re.compile(rf"^{TRAILER}:\s*\S", re.M)
TREE_LINE = re.compile(rf"^{TREE_TRAILER}:\s*([0-9a-f]{{40,64}})\s*$", re.M)


@dataclass(frozen=True)
class _Change:
    path: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    status: str  # A, M or D


def is_engram_commit(message: str) -> bool:
    """Whether a commit message carries engram's trailer in its last paragraph."""
    last = message.strip().split("\n\n")[-1]
    return TRAILER_LINE.search(last) is not None


def undo(root: Path) -> Undone:
    """Revert the last applied answer, or say why not."""
    try:
        top = _git.toplevel(Path(root))
    except _git.NotAGitRepo as exc:
        return Undone(False, str(exc))
    try:
        return _undo(top)
    except (GitFailed, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Undone(False, redact(f"undo failed: {reason}"))


def _undo(top: Path) -> Undone:
    head = gitstate.head(top)
    if not head:
        return Undone(False, "nothing to undo: the repository has no commits")
    info = gitstate.text(top, "show", "-s", "--format=%P%x00%T%x00%s%x00%B", head)
    parents_text, tree, subject, body = info.split("\0", 3)
    if not is_engram_commit(body):
        return Undone(False, f"HEAD ({head[:10]} '{subject}') is not an edit engram "
                      "applied; nothing was undone")
    recorded = TREE_LINE.search(body.strip().split("\n\n")[-1])
    if recorded and recorded.group(1) != tree:
        return Undone(False, f"HEAD ({head[:10]}) was amended since engram committed it; "
                      "nothing was undone")
    busy = gitstate.operation_in_progress(top)
    if busy:
        return Undone(False, f"the repository is in the middle of {busy}; nothing was undone")
    parents = parents_text.split()
    if len(parents) > 1:
        return Undone(False, f"HEAD ({head[:10]}) is a merge; nothing was undone")
    remote = gitstate.text(top, "branch", "-r", "--contains", head).split()
    if remote:
        return Undone(False, f"engram's commit {head[:10]} is already on {remote[0]}; "
                      "undo it with `git revert`, nothing was undone")
    changes = _changes(top, parents[0] if parents else "", head)
    differs = _changed_since(top, changes)
    if differs:
        return Undone(False, f"{differs} changed since engram's commit {head[:10]}; "
                      "nothing was undone")
    _restore(top, changes)
    index = b"".join(
        (b"0 " + b"0" * len(head) if c.status == "A" else
         f"{c.old_mode} {c.old_blob}".encode()) + b"\t" + os.fsencode(c.path) + b"\0"
        for c in changes)
    gitstate.run(top, "update-index", "-z", "--index-info", data=index)
    if parents:
        gitstate.run(top, "update-ref", "-m", "engram: undo an edit", "HEAD", parents[0], head)
    else:
        gitstate.run(top, "update-ref", "-d", "HEAD", head)
    paths = tuple(c.path for c in changes)
    return Undone(True, f"undid {head[:10]} '{subject}': {', '.join(paths)} restored",
                  head, paths)


def _changes(top: Path, parent: str, head: str) -> list[_Change]:
    args = [parent, head] if parent else ["--root", head]
    out = gitstate.run(top, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", *args)
    fields = out.split(b"\0")
    changes = []
    for meta, name in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_blob, new_blob, status = meta[1:].decode().split()
        changes.append(_Change(os.fsdecode(name), old_mode, new_mode, old_blob, new_blob,
                               status[0]))
    return changes


def _changed_since(top: Path, changes: list[_Change]) -> str:
    """The first path whose work tree or index differs from HEAD ('' when none does)."""
    states = gitstate.states(top, [c.path for c in changes])
    for change in changes:
        if states[change.path].status:
            return change.path
        full = top / change.path
        if change.status == "D":
            if os.path.lexists(full):
                return change.path
            continue
        if full.is_symlink() or not full.is_file():
            return change.path
    return ""  # git status compared the content (through any clean filter) with HEAD


def _restore(top: Path, changes: list[_Change]) -> None:
    """Give each file its content before the commit; on a failure, put the ones already
    done back to the commit's content and raise."""
    done: list[_Change] = []
    try:
        for change in changes:
            _put(top, change, before=True)
            done.append(change)
    except (OSError, GitFailed):
        for change in reversed(done):
            try:
                _put(top, change, before=False)
            except (OSError, GitFailed):
                continue  # best effort; the refusal says undo failed
        raise


def _put(top: Path, change: _Change, before: bool) -> None:
    full = top / change.path
    status = change.status if before else {"A": "D", "D": "A"}.get(change.status, "M")
    if status == "A":  # the file did not exist on this side
        full.unlink()
        _prune_dirs(top, full.parent)
        return
    blob, mode = (change.old_blob, change.old_mode) if before else (
        change.new_blob, change.new_mode)
    data = gitstate.run(top, "cat-file", "--filters", f"--path={change.path}", blob)
    _write(full, data, mode)
