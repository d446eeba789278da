"""``grep``: a regular expression over the repository's tracked text files.

``git grep -E`` (POSIX extended expressions: no backtracking blow-ups), binary files
skipped, line numbers given; ``glob`` narrows the files (``*.py``, ``app/**``). At most
``MAX_MATCHES`` lines, each cut to ``LINE_CHARS`` characters, ``MAX_CHARS`` in all.
"""

from __future__ import annotations

from pathlib import Path

from memory._checks import control_character
from memory.acting.toolloop import Tool, ToolResult
from memory.acting.tools._git import GitFailed, git

MAX_MATCHES = 100
LINE_CHARS = 240
MAX_CHARS = 10_000
MAX_PATTERN = 500

TOOL = Tool("grep", "search the repository's tracked files for a regular expression "
            "(extended syntax, as grep -E); glob limits the files ('' for all, '*.py', "
            "'app/**').",
            {"pattern": {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN},
             "glob": {"type": "string"}})


def pathspec(glob: str) -> list[str]:
    """A glob as a git pathspec: a bare name pattern matches at any depth."""
    glob = glob.strip()
    if not glob:
        return []
    if "/" not in glob:
        return [f":(glob)**/{glob}"]
    return [f":(glob){glob.lstrip('/')}"]


def bad_glob(glob: str) -> str:
    if control_character(glob):
        return "the glob holds a control character"
    if ".." in glob.split("/") or glob.startswith(":"):
        return f"{glob!r} is not a glob inside the repository"
    return ""


def grep(root: Path, pattern: str, glob: str = "") -> ToolResult:
    if not pattern or len(pattern) > MAX_PATTERN:
        return ToolResult(f"The pattern must hold 1 to {MAX_PATTERN} characters.", ok=False)
    if control_character(pattern):
        return ToolResult("The pattern holds a control character.", ok=False)
    if why := bad_glob(glob):
        return ToolResult(f"Refused: {why}.", ok=False)
    try:
        result = git(root, "grep", "-n", "-I", "-E", "--no-color", "--full-name",
                     "-e", pattern, "--", *pathspec(glob), cap=1_000_000)
    except GitFailed as exc:
        return ToolResult(f"grep failed: {exc}", ok=False)
    if result.returncode == 1 and not result.out:
        where = f" in files matching {glob!r}" if glob.strip() else ""
        return ToolResult(f"No line matches {pattern!r}{where}.")
    if result.returncode not in (0, 1):
        why = result.err or f"git grep exited {result.returncode}"
        return ToolResult(f"grep failed: {why}", ok=False)
    lines = result.out.decode("utf-8", "replace").splitlines()
    if result.cut:
        lines = lines[:-1]  # the last one may be cut mid-line
    shown, used = [], 0
    for line in lines[:MAX_MATCHES]:
        if len(line) > LINE_CHARS:
            line = line[:LINE_CHARS] + " [...]"
        if used + len(line) > MAX_CHARS:
            break
        shown.append(line)
        used += len(line) + 1
    total = f"at least {len(lines)}" if result.cut else str(len(lines))
    head = f"{total} matching lines (path:line:text)"
    if len(shown) < len(lines) or result.cut:
        head += f"; the first {len(shown)} shown: narrow the pattern or the glob"
    return ToolResult(head + ":\n" + "\n".join(shown))
