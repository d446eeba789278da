"""CodeMem's AST helpers on real tree-sitter: statement blocks, diffs, calls, the selector."""

from __future__ import annotations

from memory.backends._codeast import (
    ast_diff,
    code_blocks,
    external_calls,
    first_definition,
    statement_blocks,
)
from memory.backends._codecontext import select, to_block
from memory.chunks import Chunk

V1 = '''def total(items, tax):
    # the sum first
    subtotal = sum(i.price for i in items)
    for item in items:
        subtotal += item.fee  # fees are per item
    return subtotal * (1 + tax)
'''


def test_statement_blocks_strip_comments_and_merge_nested_spans():
    assert statement_blocks(V1, "total") == [
        "subtotal = sum(i.price for i in items)",
        "for item in items: subtotal += item.fee",
        "return subtotal * (1 + tax)",
    ]


def test_adding_a_guard_is_one_added_block():
    v2 = V1.replace("    # the sum first\n",
                    "    if not items:\n        raise ValueError('no items')  # guard\n")
    diff = ast_diff(V1, v2, "total")
    assert diff.added == ("if not items: raise ValueError('no items')",)
    assert diff.removed == ()


def test_changed_statements_show_as_removed_and_added():
    v2 = V1.replace("(1 + tax)", "(1 + tax + 0.01)").replace("item.fee", "item.fee * 2")
    diff = ast_diff(V1, v2, "total")
    assert diff.added == ("for item in items: subtotal += item.fee * 2",
                          "return subtotal * (1 + tax + 0.01)")
    assert diff.removed == ("for item in items: subtotal += item.fee",
                            "return subtotal * (1 + tax)")


def test_comment_and_layout_changes_are_no_change():
    v2 = V1.replace("# the sum first", "# compute the sum").replace(
        "return subtotal * (1 + tax)", "return subtotal  *  (1 + tax)   # total")
    assert ast_diff(V1, v2, "total").empty


def test_first_version_adds_everything_and_other_functions_do_not_count():
    code = "def helper():\n    x = 1\n    return x\n\n" + V1
    diff = ast_diff("", code, "total")
    assert len(diff.added) == 3 and diff.removed == ()


def test_unparsable_second_version_degrades_to_statement_text():
    broken = '''def total(items, tax)
    if not items
        raise ValueError('no items')
    subtotal = sum(i.price for i in items)
    return subtotal * (1 + tax)
'''
    diff = ast_diff(V1, broken, "total")
    assert diff.added == ("if not items raise ValueError('no items')",)
    assert diff.removed == ("for item in items: subtotal += item.fee",)


def test_code_blocks_and_first_definition():
    answer = "Here:\n```python\nimport os\n\ndef make(x):\n    return os.path.join(x)\n```\nDone."
    assert code_blocks(answer) == ["import os\n\ndef make(x):\n    return os.path.join(x)"]
    assert first_definition(code_blocks(answer)[0]) == "make"
    assert code_blocks("No code here, only words.") == []
    assert code_blocks("def bare(y):\n    return y\n") == ["def bare(y):\n    return y\n"]


def _chunk(qualname: str, code: str, kind: str = "function", key: str = "") -> Chunk:
    return Chunk("app/m.py", qualname, kind, 1, code.count("\n") + 1, key or qualname, code)


def test_selector_keeps_exactly_the_blocks_whose_apis_meet_the_generated_calls():
    blocks = [to_block(c) for c in [
        _chunk("connect", "def connect(url):\n    return open_socket(url)"),
        _chunk("Form", "class Form:\n    def validate_input(self, v): ...", "class",
               "app/m.py::Form\nclass Form:\nmethods: validate_input"),
        _chunk("render", "def render(form):\n    return template(form)"),
        _chunk("migrate", "def migrate(conn):\n    run_steps(conn)"),
        _chunk("slugify", "def slugify(text):\n    return text.lower()"),
    ]]
    generated = '''def save(form, url):
    def local_helper():
        return 1
    form.validate_input(form.data)
    conn = connect(url)
    run_steps(conn)
    return local_helper()
'''
    assert external_calls(generated) == {"validate_input", "connect", "run_steps"}
    kept = [b.location for b in select(blocks, external_calls(generated))]
    assert kept == ["app/m.py::connect", "app/m.py::Form", "app/m.py::migrate"]
