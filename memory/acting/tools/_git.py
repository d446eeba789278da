"""``git`` commands of the repository tools: a timeout, an output cap, never a shell."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 20.0  # seconds
CAP = 4_000_000  # bytes of output read at most (the rest is not read)


@dataclass(frozen=True)
class GitOutput:
    returncode: int
    out: bytes
    err: str
    cut: bool  # the output passed the cap and was cut


class GitFailed(RuntimeError):
    """git could not run (missing, timed out)."""


def git(root: Path, *args: str, cap: int = CAP, timeout: float = TIMEOUT) -> GitOutput:
    """``git ARGS`` in ``root``, its output read up to ``cap`` bytes."""
    command = ["git", "-C", str(root), "-c", "core.quotepath=off", *args]
    try:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except OSError as exc:
        raise GitFailed(f"git could not start: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None
    try:
        out = proc.stdout.read(cap + 1)
        cut = len(out) > cap
        if cut:
            proc.kill()
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        proc.communicate()
        raise GitFailed(f"git {args[0]} took more than {timeout:.0f} s") from exc
    return GitOutput(proc.returncode, out[:cap], err.decode("utf-8", "replace").strip(), cut)


def files(root: Path) -> list[str]:
    """Tracked files and untracked ones git does not ignore, sorted."""
    result = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if result.returncode != 0:
        raise GitFailed(f"git ls-files failed: {result.err}")
    names = result.out.decode("utf-8", "replace").split("\0")
    return sorted({n for n in names if n})


def ignored(root: Path, path: str) -> bool:
    """Whether git ignores ``path`` (a tracked file never is)."""
    return git(root, "check-ignore", "-q", "--", path).returncode == 0
