"""``read_file``: lines of a text file of the repository, numbered.

The path must name a regular file inside the repository (``memory.acting.edits.paths``:
no absolute path, no ``..``, no symlink, nothing under ``.git``), one git does not
ignore (ignored files hold build output and, often, secrets). Binary files, text that
is not UTF-8 and files over 1 MB are refused with a message saying so. At most
``MAX_LINES`` lines or ``MAX_CHARS`` characters a call: the answer says where to go on.
"""

from __future__ import annotations

from pathlib import Path

from memory.acting.edits.paths import PathRefused, safe_relative
from memory.acting.edits.textfile import NotText, content, decode
from memory.acting.toolloop import Tool, ToolResult
from memory.acting.tools._git import GitFailed, ignored

MAX_LINES = 300
MAX_CHARS = 10_000
MAX_LINE_CHARS = 2_000

TOOL = Tool("read_file", "read lines of a text file of the repository (path relative to "
            "the repository root; start is the first line, from 1; end the last, 0 for as "
            f"far as {MAX_LINES} lines go).",
            {"path": {"type": "string", "minLength": 1},
             "start": {"type": "integer", "minimum": 1},
             "end": {"type": "integer", "minimum": 0}})


def read_file(root: Path, path: str, start: int = 1, end: int = 0) -> ToolResult:
    try:
        rel = safe_relative(root, path)
    except PathRefused as exc:
        return ToolResult(f"Refused: {exc}", ok=False)
    full = root / rel
    if not full.is_file():
        return ToolResult(f"No file {rel!r} in the repository.", ok=False)
    try:
        if ignored(root, rel):
            return ToolResult(f"Refused: git ignores {rel!r}; ignored files (build output, "
                              "local settings, secrets) are not read.", ok=False)
        lines = decode(full.read_bytes()).lines
    except NotText as exc:
        return ToolResult(f"Refused: {rel!r} is {exc}.", ok=False)
    except (OSError, GitFailed) as exc:
        return ToolResult(f"Cannot read {rel!r}: {exc}", ok=False)
    return ToolResult(numbered(rel, lines, start, end))


def numbered(rel: str, lines: list[str], start: int, end: int) -> str:
    total = len(lines)
    if total == 0:
        return f"{rel} is empty."
    start = max(1, int(start))
    if start > total:
        return f"{rel} has {total} lines; line {start} is past its end."
    last = total if int(end) <= 0 else min(total, int(end))
    if last < start:
        return f"end ({end}) is before start ({start})."
    last = min(last, start + MAX_LINES - 1)
    width = len(str(last))
    shown, used = [], 0
    for number in range(start, last + 1):
        text = content(lines[number - 1])
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + f" [... {len(text) - MAX_LINE_CHARS} more characters]"
        line = f"{number:>{width}}  {text}"
        if used + len(line) + 1 > MAX_CHARS and shown:
            last = number - 1
            break
        shown.append(line)
        used += len(line) + 1
    head = f"{rel}, lines {start}-{last} of {total}:"
    more = (f"\n[{total - last} more lines: read_file with start={last + 1}]"
            if last < total else "")
    return head + "\n" + "\n".join(shown) + more
