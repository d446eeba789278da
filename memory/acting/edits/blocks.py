"""Read edit blocks out of a model's answer.

An answer holds prose and any number of blocks::

    @@@ EDIT path/to/file.py
    @@@ SEARCH
    lines as they are in the file now
    @@@ REPLACE
    the lines to put in their place
    @@@ END

Marker lines are recognised whatever their indentation and case, with or without a
colon after the keyword; any other line inside a block is kept exactly. An empty
SEARCH part (or none: REPLACE right after EDIT) creates a file. More SEARCH/REPLACE
pairs may follow an END without a new EDIT line: they edit the same file.

Tolerated, because models do it: backticks, quotes or bold around the path; each
part of a block wrapped in its own ``` fence (unwrapped when every non-empty part
of the block is). Anything else that is not a complete block (a SEARCH without a
file, a REPLACE part that runs into the next block or the end of the answer) is
reported as a problem with its block number, never completed by guessing.
"""

from __future__ import annotations

import re

from .results import Edit, Parsed, Problem

MARKER = re.compile(r"^\s*@{3,}\s*(EDIT|SEARCH|REPLACE|END)\b\s*(?::(?!:))?\s*(.*?)\s*$", re.I)
FENCE = re.compile(r"^\s*(```|~~~)")
PATH_WRAPPING = "`'\"*"


def clean_path(raw: str) -> str:
    """The path named on an EDIT line, without the wrapping models add."""
    path = raw.strip().rstrip(":").strip()
    while path and path[0] in PATH_WRAPPING and path[-1] == path[0] and len(path) > 1:
        path = path[1:-1].strip()
    return path.strip(PATH_WRAPPING).strip()


def _fenced(lines: list[str]) -> bool:
    return (len(lines) >= 2 and FENCE.match(lines[0]) is not None
            and lines[-1].strip() in ("```", "~~~"))


def _unfence(search: list[str], replace: list[str]) -> tuple[list[str], list[str]]:
    """Both parts without their own ``` fences, when every non-empty part has them."""
    parts = [p for p in (search, replace) if any(line.strip() for line in p)]
    if parts and all(_fenced(p) for p in parts):
        return ([*search[1:-1]] if _fenced(search) else search,
                [*replace[1:-1]] if _fenced(replace) else replace)
    return search, replace


class _Reader:
    """The state of one pass over the answer's lines."""

    def __init__(self) -> None:
        self.edits: list[Edit] = []
        self.problems: list[Problem] = []
        self.path = ""  # the file of the last EDIT line
        self.after_edit = False  # the last marker was EDIT
        self.part = ""  # "", "search" or "replace"
        self.block = 0
        self.search: list[str] = []
        self.replace: list[str] = []

    def problem(self, message: str) -> None:
        self.problems.append(Problem(self.block, self.path, message))

    def open_block(self, part: str) -> None:
        self.block += 1
        self.part, self.search, self.replace = part, [], []

    def close_block(self) -> None:
        search, replace = _unfence(self.search, self.replace)
        if not any(line.strip() for line in search):
            search = []
        self.edits.append(Edit(self.path, "\n".join(search), "\n".join(replace), self.block))
        self.part = ""

    def marker(self, keyword: str, rest: str, number: int) -> None:
        if self.part == "orphan":  # a block already reported: skip to its end
            self.part = ""
            if keyword in ("replace", "end"):
                return
        if self.part == "search" and keyword != "replace":
            self.problem(f"the SEARCH part has no '@@@ REPLACE' (line {number} is "
                         f"'@@@ {keyword.upper()}')")
            self.part = ""
        elif self.part == "replace" and keyword != "end":
            self.problem(f"the REPLACE part has no '@@@ END' before line {number}")
            self.part = ""
        if keyword == "edit":
            self.empty_edit()
            self.path = clean_path(rest)
            self.after_edit = True
            if not self.path:
                self.block += 1
                self.problem(f"the EDIT line {number} names no file")
            return
        if keyword == "search" and not self.part:
            self.open_block("search")
            if not self.path:
                self.problem(f"SEARCH on line {number} follows no '@@@ EDIT path' line")
                self.part = "orphan"
        elif keyword == "replace" and self.part == "search":
            self.part = "replace"
        elif keyword == "replace" and not self.part:
            self.open_block("replace")  # a new file: no SEARCH part at all
            if not (self.path and self.after_edit):
                self.problem(f"REPLACE on line {number} follows no SEARCH part")
                self.part = "orphan"
        elif keyword == "end" and self.part == "replace":
            self.close_block()
        elif keyword == "end":
            self.empty_edit()  # '@@@ EDIT x' then '@@@ END' at once
        self.after_edit = False

    def line(self, text: str) -> None:
        if self.part == "search":
            self.search.append(text)
        elif self.part == "replace":
            self.replace.append(text)

    def empty_edit(self) -> None:
        """Report an EDIT line that no block followed."""
        if self.after_edit and self.path:
            self.block += 1
            self.problem("the EDIT line is followed by no SEARCH/REPLACE block")
        self.after_edit = False

    def finish(self) -> None:
        self.empty_edit()
        if self.part in ("search", "replace"):
            missing = "@@@ REPLACE" if self.part == "search" else "@@@ END"
            self.problem(f"the answer ends inside the {self.part.upper()} part "
                         f"(no '{missing}')")


def parse(answer: str) -> Parsed:
    """Every edit block of ``answer``, in order, and every block that is malformed."""
    reader = _Reader()
    lines = answer.replace("\r\n", "\n").split("\n")
    for number, text in enumerate(lines, 1):
        found = MARKER.match(text)
        if found is None:
            reader.line(text)
        else:
            reader.marker(found.group(1).lower(), found.group(2), number)
    reader.finish()
    return Parsed(tuple(reader.edits), tuple(reader.problems))


def has_blocks(answer: str) -> bool:
    """Whether ``answer`` holds any edit marker at all (a quick test before parsing)."""
    return any(MARKER.match(line) for line in answer.split("\n"))
