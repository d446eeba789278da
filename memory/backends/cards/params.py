"""Parameter lists as developers write them.

A list is found by its balanced parentheses on one line, brackets and quotes inside kept
whole, so that annotations such as ``t.Mapping[str, t.Any]``, ``'Literal["a", "b"]'`` or
a default ``(1, 2)`` do not end or split it; it is told from other parenthesised prose by
Python's own parser (the text must be what a ``def`` could hold: "(a, b=1)", "(*, key)",
"()"; not "(see below)" or "(e.g. a dict)"), and written back in one spelling, so that
the same parameters said with other spaces or quotes are one value.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from memory.backends.cards.rules import LIST_CHARS, LIST_MISSES

OPEN, CLOSE = "([{", ")]}"
QUOTES = "'\""


def spans(text: str) -> Iterator[tuple[int, int, str]]:
    """The outermost parenthesised spans of ``text``: (start, end, inner), ``text[start]``
    the opening parenthesis and ``text[end - 1]`` its match. An opening that closes on no
    later character of its line, within ``LIST_CHARS``, is passed over (after ``LIST_MISSES``
    such, the rest of the text holds no list). A quote opens a string where Python's would
    (not between letters, as in "it's")."""
    at, missed = 0, 0
    while (start := text.find("(", at)) >= 0 and missed < LIST_MISSES:
        end = _match(text, start)
        if end is None:
            at, missed = start + 1, missed + 1
            continue
        yield start, end, text[start + 1:end - 1]
        at = end


def lists(text: str) -> list[tuple[int, int, str]]:
    """``text``'s parameter lists: (start, end, the list in one spelling) of each span a
    ``def`` could hold."""
    found = ((start, end, parameters(inner)) for start, end, inner in spans(text))
    return [(start, end, listed) for start, end, listed in found if listed is not None]


def masked(text: str, mask: str, lists_only: bool = False) -> str:
    """``text`` with each outermost parenthesised span replaced by ``mask`` (with
    ``lists_only``, only the parameter lists)."""
    out, at = [], 0
    for start, end, inner in spans(text):
        if not lists_only or parameters(inner) is not None:
            out += [text[at:start], mask]
            at = end
    return "".join(out) + text[at:]


def _match(text: str, start: int) -> int | None:
    """The end (exclusive) of the bracketed span opening at ``start``, or None."""
    stack: list[str] = []
    quote = ""
    for i in range(start, min(len(text), start + LIST_CHARS)):
        c = text[i]
        if c == "\n":
            return None
        if quote:
            if c == quote:
                quote = ""
            continue
        if c in QUOTES and not (i and text[i - 1].isalnum()):  # not the "'" of "it's"
            quote = c
        elif c in OPEN:
            stack.append(CLOSE[OPEN.index(c)])
        elif c in CLOSE:
            if not stack or c != stack.pop():
                return None
            if not stack:
                return i + 1
    return None


def parameters(inner: str) -> str | None:
    """``inner`` (the text between the parentheses) as a parameter list in one spelling,
    "(a, b: int = 0)"; None when a ``def`` could not hold it."""
    inner = inner.replace("`", "").strip()  # "(`a`, `b`)": names in code spans
    if not inner:
        return "()"
    try:
        (func,) = ast.parse(f"def _({inner}): pass").body
        assert isinstance(func, ast.FunctionDef)
        return "(" + ast.unparse(func.args) + ")"
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deep nesting: no list
        return None
