"""Code names as the ``cards`` revision rules compare them: what kind of thing a name is,
how alike two names are, and whether two alike names are alternatives for one another."""

from __future__ import annotations

import difflib

from memory.backends.cards.rules import (
    EXCEPTION_END,
    EXCEPTION_WORD,
    NAME_PART,
)


def parts(name: str) -> list[str]:
    """The words of a name's last part, lower case (``LRUCache`` -> lru, cache)."""
    return [p.lower() for p in NAME_PART.findall(name.split(".")[-1])]


def kind(name: str, code: str = "") -> str:
    """What a name is: exception, class, constant or function (from its definition when the
    repository has it, else from its spelling)."""
    last = name.split(".")[-1]
    head = code.lstrip().split("\n", 1)[0] if code else ""
    if head.startswith("class "):
        bases = head.split("(", 1)[1] if "(" in head else ""
        return "exception" if EXCEPTION_WORD.search(bases + last) \
            else "class"
    if EXCEPTION_END.search(last):
        return "exception"
    if last.isupper() and len(last) > 1:
        return "constant"
    if last[:1].isupper():
        return "class"
    return "function"


def name_similarity(a: str, b: str) -> float:
    """Similarity of two names (``parse_day`` / ``parse_date``), by characters and by parts."""
    a, b = a.split(".")[-1], b.split(".")[-1]
    chars = difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
    pa, pb = set(parts(a)), set(parts(b))
    shared = len(pa & pb) / len(pa | pb) if pa and pb else 0.0
    return max(chars, shared)


def swapped(a: str, b: str) -> bool:
    """Whether two names differ by one word swapped for another (``lru_cache`` /
    ``lfu_cache``, ``round_up`` / ``round_down``: alternatives), not by a word more or
    fewer (``merge`` / ``merge_key``, ``scan_pattern`` / ``scan_bytes_pattern``), letters
    added (``load`` / ``loads``, ``split`` / ``unsplit``), their order or their spelling
    (``cache`` / ``_cache``, ``parseDate`` / ``parse_date``): variants that may serve
    beside one another, or one name."""
    pa, pb = parts(a), parts(b)
    if len(pa) != len(pb):
        return False
    differ = [(x, y) for x, y in zip(pa, pb, strict=True) if x != y]
    if len(differ) != 1:
        return False
    x, y = differ[0]
    return not (_within(x, y) or _within(y, x))


def _within(short: str, long: str) -> bool:
    """Whether ``long`` is ``short`` with letters added (``load`` in ``loads``)."""
    rest = iter(long)
    return all(letter in rest for letter in short)
