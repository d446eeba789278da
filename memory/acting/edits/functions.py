"""Blocks aimed at one function, method or class: ``@@@ EDIT path.py::Qual.name``.

With no SEARCH part the REPLACE part is the whole new definition (decorators included)
and takes the place of the current one; with a SEARCH part, the search looks only
inside that definition (a way to make lines that occur twice in a file unique).

The definition is found in the file's content as it is now (after the answer's
earlier blocks), with the same tree-sitter chunking the repository index uses, so an
index that has not caught up cannot point at the wrong lines. Only exact names are
taken; a near miss is named in the refusal, never picked.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import replace as with_path
from typing import TYPE_CHECKING

from .matching import Match, NoMatch, find, substitute
from .results import Edit, Problem
from .textfile import TextLines, content

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex

DEF_START = ("def ", "async def ", "class ", "@")
KINDS = ("function", "method", "class")
KINDS_IN_INDEX = KINDS


def split_target(target: str) -> tuple[str, str]:
    """``path::Qual.name`` as (path, qualname); qualname '' for a plain path."""
    path, sep, qual = target.partition("::")
    return (path.strip(), qual.strip().strip("`").strip()) if sep else (target, "")


def find_files(edits: Sequence[Edit], index: RepoIndex | None
               ) -> tuple[list[Edit], list[Problem]]:
    """Blocks aimed at ``::Qual.name`` (no file) get the file the index holds that
    definition in, when exactly one file does; the others are returned as they are."""
    out: list[Edit] = []
    problems: list[Problem] = []
    for edit in edits:
        path, qual = split_target(edit.path)
        if path or not qual:
            out.append(edit)
            continue
        if index is None:
            problems.append(Problem(edit.block, edit.path, "name the file: "
                                    "'@@@ EDIT path/to/file.py::" + qual + "'"))
            continue
        files = sorted({c.path for c in index.chunks(KINDS_IN_INDEX) if c.qualname == qual})
        if len(files) == 1:
            out.append(with_path(edit, path=f"{files[0]}::{qual}"))
        elif files:
            problems.append(Problem(edit.block, edit.path, f"{qual} is defined in "
                                    f"{len(files)} files ({', '.join(files[:5])}); name one"))
        else:
            problems.append(Problem(edit.block, edit.path, f"{qual} is not in the "
                                    "repository index; name its file"))
    return out, problems


def definition(path: str, qual: str, text: TextLines) -> tuple[int, int]:
    """The 0-based [start, end) lines of ``qual``'s definition in ``text``, or NoMatch."""
    from memory.index.chunks import chunk_file, supported

    if not supported(path) or not path.lower().endswith((".py", ".pyi")):
        raise NoMatch("'::name' locations work in Python files only; use SEARCH/REPLACE")
    chunks = [c for c in chunk_file(path, text.encode()) if c.kind in KINDS]
    found = [c for c in chunks if c.qualname == qual]
    if len(found) != 1:
        names = [c.qualname for c in chunks]
        close = difflib.get_close_matches(qual, names, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        times = "is not defined" if not found else f"is defined {len(found)} times"
        raise NoMatch(f"{qual} {times} in {path}{hint}")
    start, end = found[0].start - 1, found[0].end
    if not content(text.lines[start]).lstrip().startswith(DEF_START):
        raise NoMatch(f"{qual} does not start its own line in {path}; use SEARCH/REPLACE")
    return start, end


def replace_definition(text: TextLines, span: tuple[int, int], replace: list[str]) -> list[str]:
    """The lines with the definition in ``span`` replaced by ``replace``, re-indented to
    where the definition stands."""
    start, end = span
    where = _indent(content(text.lines[start]))
    first = next((line for line in replace if line.strip()), "")
    given = _indent(first)
    add = where[len(given):] if where.startswith(given) else ""
    remove = given[len(where):] if given.startswith(where) and not add else ""
    if not where.startswith(given) and not given.startswith(where):
        raise NoMatch("the new definition's indentation does not fit where the old one is")
    return substitute(text.lines, Match(start, end, "definition", add=add, remove=remove),
                      replace, text.newline)


def find_within(text: TextLines, span: tuple[int, int], search: list[str]) -> Match:
    """``find`` restricted to the definition's lines; the match in file coordinates."""
    start, end = span
    inner = find(text.lines[start:end], search)
    return Match(inner.start + start, inner.end + start, inner.how, inner.add, inner.remove)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]
