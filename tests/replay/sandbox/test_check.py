"""The run's check test (replay/sandbox/_check.py): a real test of the run with one
expected value changed, which no text but the right answer tells from the real ones."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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
        index, text, kind, again = _check.assert_check(tests)
        assert kind == "literal" and index in (0, 1) and text != tests[index]
        original, changed = ast.dump(ast.parse(tests[index])), ast.dump(ast.parse(text))
        assert original != changed  # one constant differs, the rest is the same text
        assert len(text) - len(tests[index]) in (0, 1)
        # the re-check: the same literal moved to a third value (code that fails the
        # original with the check's value cannot pass it)
        moved = [a for a, b, c in zip(ast.walk(ast.parse(tests[index])),
                                      ast.walk(ast.parse(text)), ast.walk(ast.parse(again)),
                                      strict=True)
                 if isinstance(a, ast.Constant) and len({repr(a.value), repr(b.value),
                                                         repr(c.value)}) > 1]
        assert len(moved) == 1 and again not in (text, tests[index])
    assert _check.assert_check(["assert f(1)"])[1:] == ("assert not (f(1))", "negated",
                                                        "assert f(1)")
    assert _check.assert_check(["assert f(1) == True"])[1:] == ("assert f(1) == False",
                                                                "literal", "assert f(1) == True")
    assert _check.assert_check(["print(f(1))"])[2:] == ("constant", None)


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


def test_a_form_feed_above_the_test_moves_no_literal(tmp_path: Path):
    """Lines are counted as the parser counts them: a form feed (as some projects put
    between sections) is no line end, and the twin's changed literal lands in its assert."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(TEST_FILE.replace(
        "\n\n\ndef test_double", "\n\n\x0c\n\ndef test_double"))
    for _ in range(5):
        plan = _check.pytest_check(["tests/test_calc.py::test_double"], str(tmp_path))
        tree = ast.parse(plan["source"])  # the literal's place was one line off: no parse
        check = plan["check"].split("::")[-1]
        [twin] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == check]
        assert ast.unparse(twin.body[0]) != "assert double(2) == 4"
        assert "\x0c" in plan["source"]


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


def test_twins_are_named_even_when_the_file_took_nearly_every_word(tmp_path: Path):
    taken = "".join(f"def test_double_{w}():\n    assert 1 == 1\n\n\n"
                    for w in _check.WORDS[:-1])
    (tmp_path / "test_calc.py").write_text(TEST_FILE + "\n\n" + taken)
    plan = _check.pytest_check(["test_calc.py::test_double"], str(tmp_path))
    names = [n.name for n in ast.parse(plan["source"]).body if isinstance(n, ast.FunctionDef)]
    assert len(names) == len(set(names))  # no twin takes a name the file has
    original, check = (plan[k].split("::")[-1] for k in ("original", "check"))
    assert original != check and {original, check} <= set(names)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("target", ["tests", "tests/test_slow.py::test_slow"])
def test_the_work_dir_is_as_it_was_when_the_runner_is_killed(tmp_path: Path, monkeypatch,
                                                                target: str):
    """The runner killed at the run's overall timeout cannot undo its twin or its constant
    check's file: the host does, so a reused work dir does not fail every later run."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(60)\n    assert 2 + 2 == 4\n")
    (tmp_path / "tests" / "test_none.py").write_text("def test_none():\n    pass\n")
    run = Sandbox._run
    monkeypatch.setattr(Sandbox, "_run", lambda self, argv, channel, job=None, timeout=None:
                        run(self, argv, channel, job, timeout=3.0))
    with Sandbox(tmp_path, limits=Limits(timeout=30.0)) as box:
        before = _tree(box.work)
        result = box.pytest(target)
        assert result.timed_out and not result.ok
        assert _tree(box.work) == before


def test_a_test_files_bytes_are_kept_and_any_encoding_gets_a_verdict(tmp_path: Path,
                                                                       monkeypatch):
    """CRLF line ends survive the runner's own restore (the host's turned off here), and a
    test file that is not UTF-8 gets a verdict rather than an error."""
    crlf = b"def test_crlf():\r\n    assert 2 + 2 == 4\r\n"
    latin = "# -*- coding: latin-1 -*-\n\n\ndef test_latin():\n    assert 'caf\xe9' == 'caf\xe9'\n"
    (tmp_path / "test_crlf.py").write_bytes(crlf)
    (tmp_path / "test_latin.py").write_bytes(latin.encode("latin-1"))
    with Sandbox(tmp_path, limits=Limits(timeout=20.0)) as box:
        result = box.pytest("test_latin.py::test_latin")
        assert result.ok and result.check == "constant"
        assert (box.work / "test_latin.py").read_bytes() == latin.encode("latin-1")
        monkeypatch.setattr("replay.sandbox.sandbox._Saved.restore", lambda self: None)
        result = box.pytest("test_crlf.py::test_crlf")
        assert result.ok and result.check == "literal"
        assert (box.work / "test_crlf.py").read_bytes() == crlf


def test_the_check_is_never_written_outside_the_work_dir(tmp_path: Path, monkeypatch):
    """A target leading out of the work dir is never twinned, and the constant check's
    folder is inside it as a path, not as a prefix of its text (``work2`` beside ``work``)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "test_x.py").write_text("def test_x():\n    assert 1 + 1 == 2\n")
    assert _check.pytest_check(["../outside/test_x.py::test_x"], str(tmp_path / "work")) \
        is None
    assert not _check.inside(tmp_path / "work", tmp_path / "work2")
    assert _check.inside(tmp_path / "work", tmp_path / "work" / "tests")
    run = Sandbox._run
    monkeypatch.setattr(Sandbox, "_run", lambda self, argv, channel, job=None, timeout=None:
                        run(self, argv, channel, job, timeout=3.0))
    with Sandbox(limits=Limits(timeout=30.0)) as box:
        (box.root / "work2").mkdir()
        (box.root / "work2" / "test_slow.py").write_text(
            "import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
        assert not box.pytest("../work2/test_slow.py").ok
        assert [p.name for p in (box.root / "work2").iterdir()] == ["test_slow.py"]
