"""Write a prepared answer and commit it: one commit per answer, only its files.

The commit is built in a temporary index (HEAD plus the edited paths), so whatever
the developer has staged or changed in other files stays exactly as it was and is
not committed. Before writing, every file is checked again (same bytes as when the
diff was made, still clean, HEAD unmoved); a failure at any step puts the files and
the index back and says what happened.

The commit is made with git's plumbing (``commit-tree``, ``update-ref``): no hooks run
and no signing is asked for, so what is committed is exactly the diff the developer
saw; the author is git's configured identity.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from memory.redact import redact

from . import gitstate
from .gitstate import TRAILER, TREE_TRAILER, GitFailed
from .paths import PathRefused, safe_relative
from .results import Applied, FileChange, Prepared

SUBJECT_CHARS = 72
BODY_CHARS = 2000


def message(request: str, answer_id: str = "", tree: str = "") -> str:
    """The commit message: ``engram: <request's first line>``, the request, the trailers
    (the answer's id, and the tree committed when known)."""
    request = redact(request.strip())
    first = next((line.strip() for line in request.splitlines() if line.strip()), "")
    subject = first or "edit proposed by the assistant"
    if len(subject) > SUBJECT_CHARS - 8:
        subject = subject[:SUBJECT_CHARS - 9].rstrip() + "…"
    body = request if request and request != first else ""
    if len(body) > BODY_CHARS:
        body = body[:BODY_CHARS].rstrip() + "\n[…]"
    ident = " ".join(answer_id.split()) or "answer"
    trailers = f"{TRAILER}: {ident}\n" + (f"{TREE_TRAILER}: {tree}\n" if tree else "")
    return f"engram: {subject}\n\n" + (f"{body}\n\n" if body else "") + trailers


def apply(prepared: Prepared, request: str = "", answer_id: str = "") -> Applied:
    """Write ``prepared``'s changes and commit them; nothing written on a refusal."""
    if not prepared.ok or not prepared.changes:
        return Applied(False, "nothing to apply: " + prepared.message)
    root = prepared.root
    try:
        stale = _stale(prepared)
    except (GitFailed, OSError) as exc:
        return Applied(False, redact(str(exc)) + "; nothing was written")
    if stale:
        return Applied(False, stale + "; nothing was written (prepare the answer again)")
    written: list[FileChange] = []
    try:
        for change in prepared.changes:
            _write(root / change.path, change.after, change.mode)
            written.append(change)
        sha = _commit(root, prepared, request, answer_id)
    except (OSError, GitFailed) as exc:
        _restore(root, written)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Applied(False, redact(f"the edit could not be committed ({reason}); "
                                     "the files were put back as they were"))
    paths = tuple(prepared.paths)
    return Applied(True, f"applied to {', '.join(paths)} in commit {sha[:10]}", sha, paths)


def _stale(prepared: Prepared) -> str:
    """Why the prepared changes no longer fit the work tree ('' when they do)."""
    root = prepared.root
    if gitstate.head(root) != prepared.head:
        return "HEAD moved since the diff was made"
    busy = gitstate.operation_in_progress(root)
    if busy:
        return f"the repository is in the middle of {busy}"
    for change in prepared.changes:
        try:
            safe_relative(root, change.path)  # no symlink or folder appeared on the way
        except PathRefused as exc:
            return str(exc)
    states = gitstate.states(root, prepared.paths)
    for change in prepared.changes:
        reason = gitstate.dirty_reason(states[change.path])
        if reason:
            return f"{change.path} {reason}"
        full = root / change.path
        if change.before is None:
            if os.path.lexists(full):
                return f"{change.path} was created since the diff was made"
        elif full.read_bytes() != change.before:
            return f"{change.path} changed since the diff was made"
    return ""


def _write(path: Path, data: bytes, mode: str) -> None:
    """Replace ``path``'s content in one step (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".engram-edit-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        try:
            bits = os.stat(path).st_mode & 0o7777  # an existing file keeps its own
        except FileNotFoundError:
            bits = (0o777 if mode == "100755" else 0o666) & ~_umask()
        os.chmod(tmp, bits)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for a moment,
    for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _restore(root: Path, written: Sequence[FileChange]) -> None:
    for change in reversed(written):
        path = root / change.path
        try:
            if change.before is None:
                path.unlink(missing_ok=True)
                _prune_dirs(root, path.parent)
            else:
                _write(path, change.before, change.mode)
        except OSError:
            continue  # best effort: the message says the commit failed


def _prune_dirs(root: Path, folder: Path) -> None:
    """Remove empty folders from ``folder`` up to (not including) ``root``."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _commit(root: Path, prepared: Prepared, request: str, answer_id: str) -> str:
    """Commit the edited paths on top of HEAD; the real index follows for those paths."""
    paths = prepared.paths
    with tempfile.TemporaryDirectory(prefix="engram-index-") as folder:
        env = {"GIT_INDEX_FILE": str(Path(folder) / "index")}
        if prepared.head:
            gitstate.run(root, "read-tree", prepared.head, env=env)
        gitstate.run(root, "update-index", "--add", "--", *paths, env=env)
        tree = gitstate.text(root, "write-tree", env=env).strip()
    parents = ["-p", prepared.head] if prepared.head else []
    text = message(request, answer_id, tree)
    sha = gitstate.text(root, "commit-tree", tree, *parents, "-F", "-",
                        data=text.encode()).strip()
    old = _index_entries(root, paths)
    gitstate.run(root, "update-index", "--add", "--", *paths)
    try:
        gitstate.run(root, "update-ref", "-m", "engram: apply an edit", "HEAD", sha,
                     prepared.head or "0" * len(sha))
    except GitFailed:
        gitstate.run(root, "update-index", "-z", "--index-info", data=old)
        raise
    return sha


def _index_entries(root: Path, paths: Sequence[str]) -> bytes:
    """``--index-info`` input that puts the index entries of ``paths`` back as now."""
    out = gitstate.run(root, "ls-files", "-s", "-z", "--", *paths)
    present = {entry.partition(b"\t")[2] for entry in out.split(b"\0") if entry}
    zero = b"0" * 40
    gone = b"".join(b"0 " + zero + b"\t" + os.fsencode(p) + b"\0" for p in paths
                    if os.fsencode(p) not in present)
    kept = b"".join(b"%s %s\t%s\0" % (meta.split()[0], meta.split()[1], name)
                    for meta, _, name in (e.partition(b"\t") for e in out.split(b"\0") if e))
    return kept + gone
