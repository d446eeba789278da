"""Parameter lists as developers write them (``memory.backends.cards.params``): found by
balanced parentheses whatever the annotations hold, told from prose by Python's parser."""

from __future__ import annotations

import pytest

from memory.backends.cards.params import parameters, spans
from memory.backends.cards.rules import LIST_CHARS, LIST_MISSES


@pytest.mark.parametrize("inner, listed", [
    ("", "()"),
    ("a, b=1", "(a, b=1)"),
    ("*, key", "(*, key)"),
    ("`lines`, `prices`", "(lines, prices)"),
    ('value: "t.Collection[V]", slices: int', "(value: 't.Collection[V]', slices: int)"),
    ("d: t.Mapping[str, t.Any], autospace: bool = True",
     "(d: t.Mapping[str, t.Any], autospace: bool=True)"),
    ("obj, dumps: t.Optional[t.Callable[..., str]] = None, **kwargs: t.Any",
     "(obj, dumps: t.Optional[t.Callable[..., str]]=None, **kwargs: t.Any)"),
    ("bounds=(0, 10)", "(bounds=(0, 10))"),
    ("see below", None),
    ("e.g. a dict", None),
    ("a list of lines", None),
    ("1, 2", None),
    ("and more", None),
])
def test_a_list_a_def_could_hold_in_one_spelling(inner, listed):
    assert parameters(inner) == listed


def test_spans_keep_brackets_and_quotes_whole_and_pass_over_prose():
    text = ("Don't (it's said) f takes (a: t.Dict[str, int], b='x)') and (c, d) "
            "but (never closed")
    assert [inner for _, _, inner in spans(text)] == [
        "it's said", "a: t.Dict[str, int], b='x)'", "c, d"]
    start, end, _ = next(spans("f takes (a, (b, c)) now"))
    assert "f takes (a, (b, c)) now"[start:end] == "(a, (b, c))"
    assert list(spans("(a,\n b)")) == []  # a list is said on one line


def test_a_pasted_line_of_unclosed_openings_is_scanned_a_bounded_way():
    """Each opening is matched within ``LIST_CHARS``; after ``LIST_MISSES`` that close
    nowhere the rest of the text holds no list (a log or code pasted as one line)."""
    few = "(" * (LIST_MISSES - 1) + " f takes (a, b)"
    assert [inner for *_, inner in spans(few)] == ["a, b"]
    many = "(" * LIST_MISSES + " f takes (a, b)"
    assert list(spans(many)) == []
    far = "(" + "x" * LIST_CHARS + ")"
    assert list(spans(far)) == []
    assert parameters("a=" + "(" * 300 + ")" * 300) is None  # nesting Python refuses
    assert parameters("a=" + "1+" * 3000 + "1") is None  # too deep to write back
