"""A dependency said not to be used, and said to be used again.

"`charge` should reuse `round_up` from `app/money.py`." and later "`charge` should not
reuse `round_up`." (or "`charge` must never call `round_up`.") say opposite things of
one name: the later one holds. The other way round too: a name said not to be used and
later said to be used is used. Neither needs a cue word; the names decide. Words of
negation that still say the name is used ("cannot work without `g`", "not only uses
`g`", "not ... anything but `g`") are no negation, and a negation is no dependency the
close-name or foreign rules replace. A negation names what it rules out by the first code span after
its negating words (its subject's aside), a use names a dependency and its module
(``dependency``); a negation of a whole module ("should not import anything from the
`m` module") rules out every name said to come from it. A negation said object-first
("Don't use `g` in `f`.") is about the function it names last (``negated_in``).
"""

from __future__ import annotations

import re

from memory.backends.cards import ground
from memory.backends.cards.graph import frame
from memory.backends.cards.rules import (
    ADDITIVE,
    ANYTHING_BUT,
    NAME_SPAN,
    NEGATED,
    OBJECT_FIRST,
)


def _negation(text: str) -> re.Match[str] | None:
    found = NEGATED.search(text.replace("\u2019", "'"))
    if found is None or ANYTHING_BUT.match(text.replace("\u2019", "'")[found.end():]):
        return None  # "should not use anything but `g`" says to use `g`
    return found


def negates_use(text: str) -> bool:
    """Whether a statement says something is not to be used ("should not reuse `g`",
    "don't call `g`", "must never import `g`"; not "cannot work without `g`", "not only
    uses `g`", "should not use anything but `g`")."""
    return _negation(text) is not None


def negated_in(text: str) -> str:
    """The function an object-first negation is about ("Don't use `g` in `f`." -> "f"),
    else "": its first code span is what it rules out, not its subject."""
    plain = text.replace("\u2019", "'")
    found = OBJECT_FIRST.match(plain)
    return found.group(1).strip("()") if found and negates_use(plain) else ""


def _key(name: str) -> str:
    return name.strip("()").lower()


def ruled_out(text: str, subject: str) -> set[str]:
    """What a negation rules out: the first code span after its negating words that is
    not its subject (a name, or a module: "anything from the `m` module"); empty when it
    names none."""
    found = _negation(text)
    if found is None:
        return set()
    own = _key(subject.split("::")[-1].split(".")[-1])
    for span in NAME_SPAN.findall(text.replace("\u2019", "'")[found.end():]):
        key = _key(span)
        if key and key != own and not key.endswith("." + own):
            return {key}
    return set()


def dependency(text: str) -> tuple[str, str] | None:
    """(name, module) a dependency statement names: the code span after its subject and
    the one after that ("" when none); None when it names no second code span."""
    spans = NAME_SPAN.findall(text)
    if len(spans) < 2:
        return None
    return spans[1].strip("()"), (spans[2] if len(spans) > 2 else "")


def same_dependency(a: str, b: str) -> bool:
    """Whether two statements name the same dependency (or either names none)."""
    x, y = dependency(a), dependency(b)
    return x is None or y is None or x[0].lower() == y[0].lower()


def contradicts_use(new: str, old: str, subject: str) -> bool:
    """Whether ``new`` says the opposite of ``old`` about one dependency: one is a
    negation ruling out the name (or the module) the other, a plain dependency statement
    ("`f` needs `g` from `m`"), says is used."""
    if negates_use(new) == negates_use(old):
        return False
    negation, use = (new, old) if negates_use(new) else (old, new)
    used = dependency(use) if ADDITIVE.search(frame(use)) else None
    if used is None:
        return False
    name, module = _key(used[0]), used[1]
    for out in ruled_out(negation, subject):
        # a bare name is its dotted one's last part (`join`, `os.path.join`); two dotted
        # names must be equal; a module compares as said either way (``same_module``)
        if out == name or ("." not in out and out == name.rsplit(".", 1)[-1]) \
                or ("." not in name and name == out.rsplit(".", 1)[-1] and not module):
            return True
        if module and ground.same_module(module, out):
            return True
    return False
