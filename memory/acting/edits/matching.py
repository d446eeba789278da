"""Where a SEARCH part is in a file's lines, and the lines after its replacement.

Tried in order, each only when the previous finds nothing: the exact lines; the lines
ignoring trailing whitespace; the lines ignoring a uniform difference of indentation
(the replacement is then re-indented by the same difference). More than one place at
a level is ambiguous: the engine says where and does not pick one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from memory.listing import listed

from .textfile import content

EXACT = "exact"
TRAILING = "ignoring trailing whitespace"
INDENT = "ignoring indentation"


class NoMatch(ValueError):
    """The SEARCH lines are not in the file, or are in it more than once."""


@dataclass(frozen=True)
class Match:
    start: int  # first matched line (0-based)
    end: int  # one past the last
    how: str
    add: str = ""  # indentation the file has more than the SEARCH part
    remove: str = ""  # indentation the SEARCH part has more than the file


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _exact(file: list[str], search: list[str]) -> Match | None:
    return Match(0, 0, EXACT) if file == search else None


def _trailing(file: list[str], search: list[str]) -> Match | None:
    same = all(f.rstrip() == s.rstrip() for f, s in zip(file, search, strict=True))
    return Match(0, 0, TRAILING) if same else None


def _indented(file: list[str], search: list[str]) -> Match | None:
    """A uniform indentation difference over the non-blank lines, the same for all."""
    pairs = [(f.rstrip(), s.rstrip()) for f, s in zip(file, search, strict=True)]
    if any(bool(f.strip()) != bool(s.strip()) for f, s in pairs):
        return None
    filled = [(f, s) for f, s in pairs if f.strip()]
    if not filled:
        return None
    first_f, first_s = filled[0]
    fi, si = _indent(first_f), _indent(first_s)
    if fi.endswith(si):
        add = fi[:len(fi) - len(si)]
        return Match(0, 0, INDENT, add=add) if all(f == add + s for f, s in filled) else None
    if si.endswith(fi):
        remove = si[:len(si) - len(fi)]
        ok = all(s == remove + f for f, s in filled)
        return Match(0, 0, INDENT, remove=remove) if ok else None
    return None


LEVELS: tuple[Callable[[list[str], list[str]], Match | None], ...] = (
    _exact, _trailing, _indented)


def find(lines: list[str], search: list[str]) -> Match:
    """The one place of ``search`` (lines without endings) in ``lines`` (with them)."""
    plain = [content(line) for line in lines]
    size = len(search)
    # every level needs the first non-blank line equal but for surrounding whitespace
    key = next((i for i, s in enumerate(search) if s.strip()), 0)
    wanted = search[key].strip() if search else ""
    starts = [start for start in range(len(plain) - size + 1)
              if plain[start + key].strip() == wanted]
    for level in LEVELS:
        found = []
        for start in starts:
            hit = level(plain[start:start + size], search)
            if hit is not None:
                found.append(Match(start, start + size, hit.how, hit.add, hit.remove))
        if len(found) == 1:
            return found[0]
        if found:
            where = listed([str(m.start + 1) for m in found], 5)
            how = "" if found[0].how == EXACT else f" ({found[0].how})"
            raise NoMatch(f"the SEARCH lines occur {len(found)} times{how}, at lines "
                          f"{where}; add lines around them so they occur once")
    raise NoMatch("the SEARCH lines are not in the file" + _closest(plain, search))


def _closest(plain: list[str], search: list[str]) -> str:
    first = next((s.strip() for s in search if s.strip()), "")
    stripped = [p.strip() for p in plain]
    close = difflib.get_close_matches(first, stripped, n=1, cutoff=0.6) if first else []
    if not close:
        return ""
    return f" (its first line looks most like line {stripped.index(close[0]) + 1})"


def reindent(replace: list[str], match: Match) -> list[str]:
    """The REPLACE lines shifted by the match's indentation difference."""
    if match.add:
        return [match.add + line if line.strip() else line for line in replace]
    if match.remove:
        if any(line.strip() and not line.startswith(match.remove) for line in replace):
            raise NoMatch("the SEARCH lines match with less indentation, but the REPLACE "
                          "lines cannot be shifted the same way; copy the indentation "
                          "from the file")
        return [line[len(match.remove):] if line.strip() else line for line in replace]
    return replace


def substitute(lines: list[str], match: Match, replace: list[str], newline: str) -> list[str]:
    """``lines`` with the matched ones replaced. A new line takes the ending of the line
    it replaces, extra lines the matched block's last ending (the file's usual one if
    none); a last line without an ending stays without one."""
    ends = [line[len(content(line)):] for line in lines[match.start:match.end]]
    style = next((end for end in reversed(ends) if end), newline)
    new = [text + (ends[i] if i < len(ends) - 1 and ends[i] else style)
           for i, text in enumerate(reindent(replace, match))]
    if new and ends and not ends[-1]:
        new[-1] = content(new[-1])
    return lines[:match.start] + new + lines[match.end:]
