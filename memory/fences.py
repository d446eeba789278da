"""Markdown code fences as CommonMark reads and writes them.

- ``blocks``: the fenced code blocks of a text. An opening fence is a run of at least
  three backticks or tildes (a backtick fence's info string holds no backtick); the
  block ends at a closing fence of the same character, at least as long, with nothing
  after it but spaces, indented at most three spaces more than the opening fence (so a
  docstring's ```` ```pycon ```` example, indented with its function's body, never ends
  the block), else at the end of the text. Unlike CommonMark, an opening fence may be
  indented any amount (models put code blocks in list items).
- ``fence_for`` / ``fenced``: the fence to write around a text, longer than any fence run
  inside it, as CommonMark asks, so that a function whose docstring holds fenced
  examples stays one block.
- ``spans``: the fallback for a block whose inner fences did close it early (an example
  written flush left): the texts from an opening fence to each later bare fence line
  (or the end), longest first, for a caller that knows what a whole block must be
  (code that parses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*?)\s*$")
_RUN = re.compile(r"`{3,}|~{3,}")


@dataclass(frozen=True)
class Block:
    info: str  # the info string's first word ("" when none), as written
    text: str  # the content, the opening fence's indentation taken off each line
    start: int  # line index of the opening fence
    end: int  # line index of the closing fence (the number of lines when unclosed)


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


def _opening(line: str) -> re.Match[str] | None:
    match = _OPEN.match(line)
    if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
        return None
    return match


def _closes(line: str, fence: str, indent: int) -> bool:
    stripped = line.lstrip(" \t")
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return (run >= len(fence) and not stripped[run:].strip()
            and _width(line[:len(line) - len(stripped)]) <= indent + 3)


def _unindent(line: str, indent: int) -> str:
    cut = 0
    while cut < len(line) and line[cut] in " \t" and _width(line[:cut + 1]) <= indent:
        cut += 1
    return line[cut:]


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of ``text``, in order."""
    lines = text.splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = _opening(lines[i])
        if match is None:
            i += 1
            continue
        fence, indent = match["fence"], _width(match["indent"])
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], fence, indent)),
                   len(lines))
        body = "\n".join(_unindent(line, indent) for line in lines[i + 1:end])
        info = match["info"].strip().split()
        out.append(Block(info[0] if info else "", body, i, end))
        i = end + 1
    return out


def spans(text: str, infos: tuple[str, ...]) -> list[str]:
    """For each opening fence whose info is one of ``infos`` (casefolded; "" for none):
    the texts from it to each later line that is a bare fence run, and to the end,
    longest first (the opening fence's indentation taken off)."""
    lines = text.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        match = _opening(line)
        if match is None:
            continue
        info = match["info"].strip().split()
        if (info[0].casefold() if info else "") not in infos:
            continue
        indent = _width(match["indent"])
        ends = [j for j in range(i + 1, len(lines))
                if _closes(lines[j], match["fence"][0] * 3, 10**6)] + [len(lines)]
        out += ["\n".join(_unindent(x, indent) for x in lines[i + 1:end]) for end in ends]
    return sorted(dict.fromkeys(out), key=len, reverse=True)


def fence_for(text: str, char: str = "`") -> str:
    """A fence of ``char`` longer than every run of three or more of it in ``text``."""
    runs = [len(m.group()) for m in _RUN.finditer(text) if m.group()[0] == char]
    return char * max(3, max(runs, default=0) + 1)


def fenced(text: str, info: str = "") -> str:
    """``text`` as one fenced block, with ``info`` after the opening fence."""
    fence = fence_for(text)
    return f"{fence}{info}\n{text}\n{fence}"
