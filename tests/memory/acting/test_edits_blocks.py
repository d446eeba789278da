"""memory/acting/edits/blocks.py: edit blocks read out of model answers, tolerantly."""

from __future__ import annotations

from memory.acting.edits import EDIT_FORMAT, FUNCTION_EDITS, parse
from memory.acting.edits.blocks import clean_path, has_blocks

ANSWER = """Sure, here is the fix.

@@@ EDIT app/calc.py
@@@ SEARCH
def add(a, b):
    return a - b
@@@ REPLACE
def add(a, b):
    return a + b
@@@ END

And a second change in the same file:

@@@ SEARCH
x = 1
@@@ REPLACE
@@@ END
"""


def test_blocks_and_the_prose_around_them():
    parsed = parse(ANSWER)
    assert parsed.ok
    first, second = parsed.edits
    assert (first.path, first.block) == ("app/calc.py", 1)
    assert first.search == "def add(a, b):\n    return a - b"
    assert first.replace == "def add(a, b):\n    return a + b"
    assert (second.path, second.search, second.replace, second.block) == (
        "app/calc.py", "x = 1", "", 2)


def test_a_new_file_has_an_empty_or_no_search_part():
    parsed = parse("@@@ EDIT a.txt\n@@@ SEARCH\n\n@@@ REPLACE\nhello\n@@@ END\n"
                   "@@@ EDIT b.txt\n@@@ REPLACE\nworld\n\n@@@ END")
    assert parsed.ok
    assert [(e.path, e.search, e.replace) for e in parsed.edits] == [
        ("a.txt", "", "hello"), ("b.txt", "", "world\n")]


def test_what_models_add_around_markers_and_paths_is_tolerated():
    answer = ("1. Change it:\n"
              "   @@@ edit: **`src/x.py`**\n"
              "   @@@ Search:\n"
              "```python\n"
              "    y = 2  \n"
              "```\n"
              "   @@@@ replace\n"
              "```python\n"
              "    y = 3\n"
              "```\n"
              "   @@@ end\n")
    parsed = parse(answer.replace("\n", "\r\n"))
    assert parsed.ok, parsed.problems
    (edit,) = parsed.edits
    assert (edit.path, edit.search, edit.replace) == ("src/x.py", "    y = 2  ", "    y = 3")


def test_fences_are_content_when_only_one_part_has_them():
    parsed = parse("@@@ EDIT README.md\n@@@ SEARCH\n```\ncode\n```\n@@@ REPLACE\nplain\n"
                   "@@@ END")
    assert parsed.edits[0].search == "```\ncode\n```"


def test_malformed_blocks_are_reported_with_their_number_and_good_ones_kept():
    answer = ("@@@ SEARCH\norphan\n@@@ REPLACE\nx\n@@@ END\n"  # 1: no file
              "@@@ EDIT a.py\n@@@ SEARCH\nold\n@@@ EDIT b.py\n"  # 2: no REPLACE
              "@@@ SEARCH\nb\n@@@ REPLACE\nc\n"  # 3: runs into the next block
              "@@@ EDIT c.py\n@@@ SEARCH\nfine\n@@@ REPLACE\ngood\n@@@ END\n"  # 4: fine
              "@@@ EDIT\n"  # 5: no file named
              "@@@ EDIT d.py\n@@@ SEARCH\nunfinished\n@@@ REPLACE\nnew\n")  # 6: no END
    parsed = parse(answer)
    assert not parsed.ok
    assert [(e.path, e.block) for e in parsed.edits] == [("c.py", 4)]
    found = {p.block: (p.path, p.message) for p in parsed.problems}
    assert sorted(found) == [1, 2, 3, 5, 6]
    assert "follows no '@@@ EDIT path' line" in found[1][1]
    assert found[2][0] == "a.py" and "no '@@@ REPLACE'" in found[2][1]
    assert found[3][0] == "b.py" and "no '@@@ END'" in found[3][1]
    assert "names no file" in found[5][1]
    assert found[6][0] == "d.py" and "ends inside the REPLACE part" in found[6][1]
    assert str(parsed.problems[0]).startswith("block 1: ")


def test_an_edit_line_without_a_block_is_reported():
    for answer in ("@@@ EDIT a.py\n@@@ END\n", "@@@ EDIT a.py\nsome code\n```\n",
                   "@@@ EDIT a.py\ndef f():\n    pass\n@@@ EDIT b.py\n@@@ REPLACE\nx\n@@@ END"):
        parsed = parse(answer)
        assert [(p.block, p.path) for p in parsed.problems] == [(1, "a.py")], answer
        assert "followed by no SEARCH/REPLACE block" in parsed.problems[0].message


def test_prose_alone_has_no_blocks():
    assert not has_blocks("Use `x = 1` here.\n```python\nx = 1\n```")
    assert parse("No edit, just advice.") == parse("")
    assert has_blocks(ANSWER)


def test_paths_lose_their_wrapping():
    assert clean_path(" `a/b.py`: ") == "a/b.py"
    assert clean_path('"c d.txt"') == "c d.txt"
    assert clean_path("**x.py**") == "x.py"


def test_the_system_prompt_example_is_one_valid_block():
    parsed = parse(EDIT_FORMAT)
    assert parsed.ok and len(parsed.edits) == 1
    assert parsed.edits[0].path == "path/to/file.py"
    assert len(EDIT_FORMAT.split()) < 120  # short enough for a small model's window


def test_the_function_rule_names_a_location_the_parser_keeps():
    assert "::Class.method" in FUNCTION_EDITS
    parsed = parse("@@@ EDIT a.py::C.m\n@@@ REPLACE\ndef m(self):\n    pass\n@@@ END")
    assert parsed.ok and parsed.edits[0].path == "a.py::C.m" and parsed.edits[0].search == ""
    assert parse("@@@ EDIT ::C.m\n@@@ REPLACE\nx\n@@@ END").edits[0].path == "::C.m"
    assert parse("@@@ EDIT: ::C.m\n@@@ REPLACE\nx\n@@@ END").edits[0].path == "::C.m"


def test_the_worked_example_answers_its_question():
    from memory.acting.edits.instructions import EXAMPLE_QUESTION, example_messages

    question, answer = example_messages()
    assert question == {"role": "user", "content": EXAMPLE_QUESTION}
    (edit,) = parse(answer["content"]).edits
    assert edit.path == "app.py" and edit.search in EXAMPLE_QUESTION
    assert example_messages() is not example_messages()
