"""Whatever a model writes, the parser and prepare answer with data, never an exception,
and prepare writes nothing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.acting.edits import parse, prepare

from .test_edits_support import picture, repo

PIECES = ["@@@ EDIT app/calc.py", "@@@ EDIT ../x", "@@@ EDIT", "@@@ SEARCH", "@@@ REPLACE",
          "@@@ END", "@@@ EDIT new.py", "@@@ EDIT app/calc.py::add", "@@@ EDIT ::sub",
          "def add(a, b):", "    return a - b", "```python", "```", "", "  ", "x = 1",
          "@@@ edit: `README.md`", "# calc", "\t", "@@@ EDIT /etc/passwd", "\r"]
ANSWERS = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)),
                   max_size=14).map("\n".join)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(answer=ANSWERS)
def test_parsing_never_raises_and_numbers_blocks_in_order(answer):
    parsed = parse(answer)
    blocks = [e.block for e in parsed.edits]
    assert blocks == sorted(set(blocks))
    assert all(p.message for p in parsed.problems)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return repo(tmp_path_factory.mktemp("fuzz"))


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answer=ANSWERS)
def test_prepare_never_raises_and_never_writes(root, answer):
    before = picture(root)
    prepared = prepare(root, answer)
    assert prepared.message
    assert prepared.ok == bool(prepared.changes)
    assert picture(root) == before
