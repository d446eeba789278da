"""Unified diffs of one file's change, for the developer to read before saying yes."""

from __future__ import annotations

import difflib

from .textfile import split_lines


def unified(path: str, before: bytes | None, after: bytes, context: int = 3) -> str:
    """A ``git diff``-like unified diff; ``before`` None: a new file."""
    old = [] if before is None else split_lines(before.decode("utf-8"))
    new = split_lines(after.decode("utf-8"))
    lines = list(difflib.unified_diff(
        old, new, "/dev/null" if before is None else f"a/{path}", f"b/{path}", n=context))
    out: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the file's last line has no newline
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
