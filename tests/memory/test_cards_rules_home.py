"""Every rule of ``cards`` lives in ``memory/backends/cards/rules.py``, as data with a line
each: no other module of the package compiles or applies a regular expression of its own,
defines a word list, or sets a float threshold. A rule change is then a change of that
one file, measured by the protocol (docs/results.md, issue 40)."""

from __future__ import annotations

import ast
from pathlib import Path

import memory.backends.cards as package

HOME = Path(package.__file__).parent
# text.py reads back the field labels card.py writes (``LABELS``): the card's own format,
# not a rule of reading what someone said
FORMAT_ONLY = {"text.py"}
# tuples of names that enumerate options, node and edge types or stored columns: what a
# setting may be, not a rule of reading
ENUMERATIONS = {
    "backend.py": {"SCORERS"}, "build.py": {"FACT_MODES"}, "card.py": {"LEVELS"},
    "graph.py": {"NODE_TYPES", "EDGE_TYPES"}, "judge.py": {"JUDGES"},
    "kept.py": {"_COLUMNS"}, "pack.py": {"REPO_KINDS", "PACKINGS"},
    "score.py": {"LEVELS", "REPO_TYPES", "_NUMBERS"},
}


def _modules() -> list[Path]:
    found = sorted(p for p in HOME.glob("*.py") if p.name != "rules.py")
    assert len(found) > 20  # the package is where this test thinks it is
    return found


def _targets(node: ast.Assign | ast.AnnAssign) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names: list[str] = []
    for t in targets:
        names += [e.id for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                  if isinstance(e, ast.Name)]
    return names


def _constants(value: ast.expr, kind: type) -> list[object]:
    """The constants of ``kind`` a literal holds: a tuple, list, set, a frozenset({...})
    or frozenset((...)) call, or the literal itself."""
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "frozenset" \
            and value.args:
        value = value.args[0]
    items = value.elts if isinstance(value, ast.Tuple | ast.List | ast.Set) else [value]
    return [e.value for e in items if isinstance(e, ast.Constant) and type(e.value) is kind]


def test_no_module_but_rules_compiles_or_applies_a_pattern() -> None:
    found = []
    for path in _modules():
        if path.name in FORMAT_ONLY:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "re" and node.attr not in ("escape", "Match",
                                                                     "Pattern", "I"):
                found.append(f"{path.name}:{node.lineno} re.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "re":
                found.append(f"{path.name}:{node.lineno} from re import ...")
    assert not found, f"patterns outside rules.py: {found}"


def test_no_module_but_rules_defines_a_word_list_or_a_float_threshold() -> None:
    found = []
    for path in _modules():
        allowed = ENUMERATIONS.get(path.name, set())
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            names = _targets(node)
            if set(names) <= allowed:
                continue
            values = node.value.elts if isinstance(node.value, ast.Tuple) \
                and len(names) > 1 else [node.value]
            for value in values:
                if len(_constants(value, str)) >= 2:
                    found.append(f"{path.name}:{node.lineno} word list {names}")
                if _constants(value, float):
                    found.append(f"{path.name}:{node.lineno} float {names}")
    assert not found, f"rules outside rules.py: {found}"


def test_the_checks_see_what_they_look_for() -> None:
    """The two checks above find a pattern, a word list and a threshold when one is there."""
    code = ('import re\n_X = re.compile(r"a|b")\nWORDS = ("a", "b")\n'
            'SET = frozenset({"a", "b"})\nT = 0.5\nA, B = 0.1, 0.2\n')
    tree = ast.parse(code)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "compile"]
    assert calls
    assigns = [n for n in tree.body if isinstance(n, ast.Assign)]
    assert [len(_constants(a.value, str)) for a in assigns] == [0, 2, 2, 0, 0]
    assert [bool(_constants(a.value, float)) for a in assigns] == [False, False, False, True,
                                                                    True]
    assert _targets(assigns[-1]) == ["A", "B"]
