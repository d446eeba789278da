"""A unified diff as coloured text (no Textual): added lines in the theme's success
colour, removed ones in its error colour, hunk headers in its accent, file headers bold.
The edit screen and the turn's edit panel both show diffs this way."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from memory.fences import fence_for


@dataclass(frozen=True)
class DiffColours:
    added: str = "green"
    removed: str = "red"
    hunk: str = "cyan"
    header: str = "bold"


def theme_colours(theme: Any) -> DiffColours:
    """A Textual theme's success, error and accent colours for a diff."""
    return DiffColours(added=getattr(theme, "success", None) or "green",
                       removed=getattr(theme, "error", None) or "red",
                       hunk=getattr(theme, "accent", None) or "cyan")


def diff_text(diff: str, colours: DiffColours = DiffColours()) -> Text:
    """``diff`` coloured line by line; an empty diff is said, not shown blank."""
    text = Text(no_wrap=False)
    if not diff.strip():
        text.append("(no change)", style="italic")
        return text
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "diff ", "new file", "deleted file", "index ")):
            style = colours.header
        elif line.startswith("@@"):
            style = colours.hunk
        elif line.startswith("+"):
            style = colours.added
        elif line.startswith("-"):
            style = colours.removed
        else:
            style = ""
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


def diff_stats(diff: str) -> tuple[int, int]:
    """Lines added and removed in ``diff`` (file headers not counted)."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


EDIT_MARKER = re.compile(r"^\s*@{3,}\s*(EDIT|SEARCH|REPLACE|END)\b", re.I)
FENCE = re.compile(r"^\s*(```|~~~)")


def fence_edit_blocks(answer: str) -> str:
    """``answer`` for display as Markdown: each run of edit blocks (``@@@ EDIT`` to its
    last ``@@@ END``) outside a code fence put in one, longer than any fence inside the
    run (CommonMark), so its lines stay lines. Only what is shown changes; the answer
    itself is never rewritten."""
    out: list[str] = []
    lines = answer.split("\n")
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = EDIT_MARKER.match(line)
        if not in_fence and marker and marker.group(1).upper() != "END":
            end = _run_end(lines, i)
            fence = fence_for("\n".join(lines[i:end]))
            out += [fence + "text", *lines[i:end], fence]
            i = end
            continue
        if FENCE.match(line):
            in_fence = not in_fence
        out.append(line)
        i += 1
    return "\n".join(out)


def _run_end(lines: list[str], start: int) -> int:
    """The index after a run of edit blocks opened at ``start``: after its last ``@@@ END``
    (one not followed by another block part), else the end of the text."""
    for i in range(start + 1, len(lines)):
        marker = EDIT_MARKER.match(lines[i])
        if marker and marker.group(1).upper() == "END" and not _more_blocks(lines, i + 1):
            return i + 1
    return len(lines)


def _more_blocks(lines: list[str], start: int) -> bool:
    """Whether the next non-blank line after ``start`` opens another block part."""
    for line in lines[start:]:
        if line.strip():
            marker = EDIT_MARKER.match(line)
            return bool(marker) and marker.group(1).upper() in ("EDIT", "SEARCH", "REPLACE")
    return False
