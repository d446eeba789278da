"""Markdown code fences as CommonMark reads and writes them (memory/fences.py)."""

from __future__ import annotations

from memory.backends.codemem.syntax import code_blocks
from memory.fences import blocks, fence_for, fenced, spans

DOCUMENTED = '''def mean(values):
    """The arithmetic mean.

    ```pycon
    >>> mean([1, 2])
    1.5
    ```
    """
    return sum(values) / len(values)'''


def test_a_block_ends_only_at_a_closing_fence_as_long_and_not_indented_past_its_own():
    answer = f"Here:\n\n```python\n{DOCUMENTED}\n```\n\nDone."
    (block,) = blocks(answer)
    assert block.info == "python" and block.text == DOCUMENTED
    longer = "````python\nx = '''\n```\n'''\n````\nafter\n```\nnot closed"
    first, second = blocks(longer)
    assert first.text == "x = '''\n```\n'''" and second.text == "not closed"  # to the end
    tildes = "~~~\n```\n~~~~\n"
    assert [b.text for b in blocks(tildes)] == ["```"]
    assert blocks("``` a`b\nnot a fence") == []  # a backtick info string has no backtick


def test_a_fence_in_a_list_item_takes_its_indentation_off():
    (block,) = blocks("1. Code:\n   ```py\n   def f():\n       return 1\n   ```\n")
    assert block.info == "py" and block.text == "def f():\n    return 1"


def test_writing_a_block_picks_a_fence_longer_than_any_inside():
    assert fence_for("x = 1") == "```"
    assert fence_for(DOCUMENTED) == "````"
    assert fence_for("`````\n```") == "``````"
    assert fenced("x = 1", "python") == "```python\nx = 1\n```"
    (block,) = blocks(fenced(DOCUMENTED, "python"))
    assert block.text == DOCUMENTED


def test_code_blocks_keep_a_docstrings_fenced_examples():
    assert code_blocks(f"```python\n{DOCUMENTED}\n```") == [DOCUMENTED]
    flush = DOCUMENTED.replace("\n    ```", "\n```")  # examples written flush left
    assert code_blocks(f"```python\n{flush}\n```") != [flush]  # CommonMark closes it early
    assert flush in spans(f"Intro\n```python\n{flush}\n```\nBye", ("python",))
