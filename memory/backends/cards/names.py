"""Code names as the ``cards`` revision rules compare them: what kind of thing a name is,
how alike two names are, and whether two alike names are alternatives for one another."""

from __future__ import annotations

import difflib
import re

_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def parts(name: str) -> list[str]:
    """The words of a name's last part, lower case (``LRUCache`` -> lru, cache)."""
    return [p.lower() for p in _PART.findall(name.split(".")[-1])]


def kind(name: str, code: str = "") -> str:
    """What a name is: exception, class, constant or function (from its definition when the
    repository has it, else from its spelling)."""
    last = name.split(".")[-1]
    head = code.lstrip().split("\n", 1)[0] if code else ""
    if head.startswith("class "):
        bases = head.split("(", 1)[1] if "(" in head else ""
        return "exception" if re.search(r"(Error|Exception|Warning)\b", bases + last) \
            else "class"
    if re.search(r"(Error|Exception|Warning)$", last):
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
    """Whether two alike names differ by a word swapped for another (``lru_cache`` /
    ``lfu_cache``: alternatives), not by a word more or fewer (``merge`` / ``merge_key``,
    ``scan_pattern`` / ``scan_bytes_pattern``: a variant that may serve beside it)."""
    return len(parts(a)) == len(parts(b))
