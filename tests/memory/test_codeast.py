"""CodeMem's AST helpers on real tree-sitter: statement blocks, diffs, calls, the selector."""

from __future__ import annotations

from pathlib import Path

from memory.backends.codemem.context import BLOCK_KINDS, CodeBlock, select, to_block
from memory.backends.codemem.syntax import (
    BUILTIN_METHODS,
    BUILTIN_NAMES,
    ast_diff,
    calls,
    code_blocks,
    defines,
    definitions,
    external_calls,
    first_definition,
    statement_blocks,
)
from memory.index.chunks import Chunk, python_chunks

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


# -- the selector leaves builtins out (issue 12, item 12) --------------------------------

DEMO = Path(__file__).resolve().parents[2] / "replay" / "locoeval" / "demo" / "inventory"

BUILTINS_ONLY = '''def summarize(rows):
    out = []
    for key, value in sorted(rows.items()):
        if not isinstance(value, int):
            raise ValueError(f"bad {key}")
        out.append(f"{key}={value}")
    text = ", ".join(out)
    parts = text.split(",")
    seen = set()
    seen.add(text.strip().lower())
    merged = dict(rows)
    merged.update({"n": len(parts)})
    return len(parts), max(len(p) for p in parts), merged.get("n"), seen
'''


def _demo_blocks() -> list[CodeBlock]:
    blocks = []
    for path in sorted((DEMO / "inventory").rglob("*.py")):
        rel = str(path.relative_to(DEMO))
        blocks += [to_block(c) for c in python_chunks(rel, path.read_bytes())
                   if c.kind in BLOCK_KINDS]
    return blocks


def test_builtin_sets_come_from_the_interpreter():
    assert {"len", "sorted", "ValueError", "isinstance"} <= BUILTIN_NAMES
    assert {"join", "split", "append", "items", "update", "add", "removeprefix",
            "bit_length", "fromhex"} <= BUILTIN_METHODS
    assert "normalize_sku" not in BUILTIN_NAMES | BUILTIN_METHODS


def test_builtins_and_builtin_type_methods_are_not_external_calls():
    code = BUILTINS_ONLY.replace("    return len(parts)",
                                 "    sku = normalize_sku(text)\n    return len(parts)")
    # ``rows.items()``: rows is a parameter of unknown type -> a candidate (see below)
    assert external_calls(code) == {"normalize_sku", "items"}
    assert external_calls(code, defined={"normalize_sku", "Stock", "add"}) == {"normalize_sku"}
    # a block's own APIs: builtins and builtin-type method names all left out
    assert calls(code) == {"normalize_sku"}
    assert {"len", "join", "append", "ValueError"} <= calls(code, with_builtins=True)


def test_ambiguous_attribute_calls_count_only_for_repository_definitions():
    code = '''def restock(stock, sku):
    seen = set()
    seen.add(sku)                 # a set: builtin, never counts
    ", ".join([sku]).upper()      # str literal, then a str method on it
    super().__init__()
    stock.add(sku, 5)             # unknown receiver: the repository's Stock.add?
    return format(stock.remove(sku, 1))
'''
    assert external_calls(code, defined={"add", "Stock"}) == {"add"}
    assert external_calls(code, defined={"add", "remove", "format"}) == {"add", "remove",
                                                                        "format"}
    # repository unknown: ambiguous attribute calls stay candidates, bare builtins go
    assert external_calls(code) == {"add", "remove"}


def test_selector_prunes_the_demo_for_builtins_only_code():
    blocks = _demo_blocks()
    assert len(blocks) == 16
    # before builtins were left out: raw calls on both sides of the intersection
    raw = calls(BUILTINS_ONLY, with_builtins=True) - defines(BUILTINS_ONLY)
    before = [b for b in blocks if (b.apis | calls(b.code, with_builtins=True)) & raw]
    assert len(before) == 10
    assert select(blocks, external_calls(BUILTINS_ONLY)) == []
    defined = set().union(*(definitions(b.code) for b in blocks))
    assert select(blocks, external_calls(BUILTINS_ONLY, defined)) == []


def test_selector_keeps_the_blocks_realistic_code_really_uses():
    blocks = _demo_blocks()
    code = '''def restock_report(stock, lines):
    names = [normalize_sku(line.strip()) for line in lines if line]
    for name in names:
        stock.add(name, len(names))
    return ", ".join(sorted(names))
'''
    kept = {b.location for b in select(blocks, external_calls(code))}
    # normalize_sku and its callers, and Stock's ``add`` (an API the repository defines)
    assert kept == {"inventory/text.py::normalize_sku", "inventory/orders.py::order_total",
                    "inventory/stock.py::Stock", "inventory/stock.py::Stock.add",
                    "inventory/stock.py::Stock.remove"}
