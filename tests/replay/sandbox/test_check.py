"""The run's check test (replay/sandbox/_check.py): a real test of the run with one
expected value changed, which no text but the right answer tells from the real ones."""

from __future__ import annotations

import ast
from pathlib import Path

from replay.sandbox import _check
from replay.sandbox.sandbox import Limits, Sandbox

TEST_FILE = '''import pytest

from pkg.calc import double


def test_double():
    assert double(2) == 4


@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    value = double(x)
    assert value == x * 2
    assert double(0) == 0


def test_early():
    if double(1):
        return
    assert double(5) == 10
'''


def test_an_assert_group_is_copied_with_one_expected_literal_changed():
    tests = ["assert f(1) == 2", "x = f('a')\nassert x == 'aa'\nassert f(0) == (0, 1.5)"]
    for _ in range(20):
        index, text, kind = _check.assert_check(tests)
        assert kind == "literal" and index in (0, 1) and text != tests[index]
        original, changed = ast.dump(ast.parse(tests[index])), ast.dump(ast.parse(text))
        assert original != changed  # one constant differs, the rest is the same text
        assert len(text) - len(tests[index]) in (0, 1)
    assert _check.assert_check(["assert f(1)"])[1:] == ("assert not (f(1))", "negated")
    assert _check.assert_check(["print(f(1))"])[2] == "constant"


def test_a_targets_test_is_twinned_beside_itself_renamed_alike(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(TEST_FILE)
    plan = _check.pytest_check(["tests/test_calc.py::test_double"], str(tmp_path))
    assert plan["kind"] == "literal" and plan["name"] == "tests/test_calc.py::test_double"
    tree = ast.parse(plan["source"])
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert "test_double" not in names and len(names) == 4
    original, check = (plan[k].split("::")[-1] for k in ("original", "check"))
    assert {original, check} <= set(names) and original != check
    assert abs(names.index(original) - names.index(check)) == 1  # side by side
    assert _check.argv("tests/test_calc.py::test_double", plan, False) == [plan["original"]]
    assert _check.argv("tests/test_calc.py::test_double", plan, True) == [plan["check"]]
    assert _check.as_reported(plan["original"], plan) == "tests/test_calc.py::test_double"
    param = _check.pytest_check(["tests/test_calc.py::test_param[1]"], str(tmp_path))
    assert param["suffix"] == "[1]" and _check.argv(
        "tests/test_calc.py::test_param[1]", param, True) == [param["check"] + "[1]"]
    # a test that may return before its assert is never copied (its copy could pass)
    assert _check.pytest_check(["tests/test_calc.py::test_early"], str(tmp_path)) is None
    whole = _check.pytest_check(["tests/test_calc.py"], str(tmp_path))
    assert _check.argv("tests/test_calc.py", whole, True) == [
        "tests/test_calc.py", "--deselect", whole["original"]]


def test_the_test_file_is_as_it_was_after_the_run(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "calc.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(TEST_FILE)
    with Sandbox(tmp_path, limits=Limits(timeout=20.0)) as box:
        result = box.pytest("tests/test_calc.py::test_double", "tests/test_calc.py::test_param")
        assert result.ok and result.check == "literal" and not result.forged
        assert result.passed == {"tests/test_calc.py::test_double",
                                 "tests/test_calc.py::test_param[1]",
                                 "tests/test_calc.py::test_param[2]"}
        assert box.read("tests/test_calc.py") == TEST_FILE
        assert sorted(p.name for p in (box.work / "tests").iterdir()) == ["test_calc.py"]
