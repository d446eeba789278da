"""A unified diff as coloured text (no Textual): added lines in the theme's success
colour, removed ones in its error colour, hunk headers in its accent, file headers bold.
The edit screen and the turn's edit panel both show diffs this way."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text


@dataclass(frozen=True)
class DiffColours:
    added: str = "green"
    removed: str = "red"
    hunk: str = "cyan"
    header: str = "bold"


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
