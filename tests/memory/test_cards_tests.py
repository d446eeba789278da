"""cards reads test results from a turn's tool calls: real pytest and unittest runs
(subprocesses, and the run tool in the real jail driven by a scripted model) become a
``tests`` unit and one failure unit per failed test; a later run revises the failures it
makes out of date. The turns' own words never say what changed (no cue words)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory.acting.jail import bwrap
from memory.acting.jail.tree import TreeJail
from memory.acting.tools import grep, read
from memory.acting.tools.box import RepoTools
from memory.acting.tools.consent import ConsentPolicy
from memory.acting.tools.run import Limits, RunTool
from memory.backends import BackendEnv, registry
from memory.backends.cards import testruns
from memory.backends.cards.build import FACT_PROMPT
from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from memory.turn.agent import Agent, AgentConfig
from memory.types import Turn
from tests.asked import asked

from ..conftest import git, make_repo

SUITE = '''import pytest


def add(a, b):
    return a - b


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert 1 - 1 == 0


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n == 1


class TestBox:
    def test_open(self):
        raise ValueError("box is shut")


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_uses_broken(broken):
    pass


@pytest.mark.skip
def test_skip():
    pass
'''
UNITTESTS = '''import unittest


class Shelf(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(1, 1)

    def test_bad(self):
        self.assertEqual(1, 2)

    def test_lookup(self):
        {}["missing"]
'''


_RUNS: dict[tuple[str, ...], str] = {}


def run(root: Path, *args: str) -> str:
    """The output of ``python -m ARGS`` in ``root`` (each run once per test module: the
    runs are real, and slow on a busy machine)."""
    key = (str(root), *args)
    if key not in _RUNS:
        _RUNS[key] = _run(root, *args)
    return _RUNS[key]


def _run(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", *args], cwd=root, capture_output=True,
                          text=True, timeout=120)
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_calc.py").write_text(SUITE)
    (root / "tests" / "test_shelf.py").write_text(UNITTESTS)
    return root


PYTEST = ("pytest", "-p", "no:cacheprovider")


@pytest.mark.parametrize("verbose", [False, True])
def test_a_pytest_run_gives_counts_failed_ids_and_first_error_lines(project, verbose):
    found = testruns.parse(run(project, *PYTEST, "-v" if verbose else "-q",
                               "tests/test_calc.py"))
    assert found is not None and found.runner == "pytest"
    assert found.counts == {"failed": 3, "passed": 2, "skipped": 1, "errors": 1}
    assert [(f.test, f.error, f.kind) for f in found.failures] == [
        ("tests/test_calc.py::test_add", "assert -1 == 5", "failed"),
        ("tests/test_calc.py::test_param[2]", "assert 2 == 1", "failed"),
        ("tests/test_calc.py::TestBox::test_open", "ValueError: box is shut", "failed"),
        ("tests/test_calc.py::test_uses_broken", "RuntimeError: fixture exploded", "error")]
    assert not found.ok and not found.stopped
    # -v names the passing tests; -q does not
    assert found.passed == (["tests/test_calc.py::test_sub", "tests/test_calc.py::test_param[1]"]
                            if verbose else [])


def test_a_run_stopped_at_its_first_failure_says_so(project):
    found = testruns.parse(run(project, *PYTEST, "-q", "-x", "tests/test_calc.py"))
    assert found is not None and found.stopped
    assert [f.test for f in found.failures] == ["tests/test_calc.py::test_add"]


@pytest.mark.parametrize("verbose", [False, True])
def test_a_unittest_run_gives_counts_failed_ids_and_errors(project, verbose):
    args = ["unittest", *(["-v"] if verbose else []), "tests.test_shelf"]
    found = testruns.parse(run(project, *args))
    assert found is not None and found.runner == "unittest"
    assert found.counts == {"failed": 1, "errors": 1, "passed": 1}
    assert sorted((f.test, f.error, f.kind) for f in found.failures) == [
        ("tests.test_shelf.Shelf.test_bad", "AssertionError: 1 != 2", "failed"),
        ("tests.test_shelf.Shelf.test_lookup", "KeyError: 'missing'", "error")]
    assert found.passed == (["tests.test_shelf.Shelf.test_ok"] if verbose else [])


def test_a_passing_run_is_ok(project):
    found = testruns.parse(run(project, *PYTEST, "-q", "tests/test_calc.py::test_sub"))
    assert found is not None and found.ok and found.counts == {"passed": 1}
    assert found.summary() == "1 passed"


def test_a_file_read_or_a_grep_that_quotes_a_run_is_no_run(project, tmp_path):
    log = run(project, *PYTEST, "-q", "tests/test_calc.py")
    repo = make_repo(tmp_path / "repo", {"logs/last.txt": log})
    assert testruns.parse(log) is not None
    shown = read.read_file(repo, "logs/last.txt", 1, 0)
    assert "FAILED tests/test_calc.py::test_add" in shown.text
    assert testruns.parse(shown.text) is None
    found = grep.grep(repo, "failed|FAILED", "")
    assert "test_add" in found.text and testruns.parse(found.text) is None
    assert testruns.parse("all good, nothing ran") is None


@pytest.mark.parametrize(("command", "paths", "selecting", "stops"), [
    ("python -m pytest -q -x -p no:cacheprovider", (), False, True),
    ("pytest tests/test_a.py::test_x ./tests/unit/ --maxfail=2", (
        "tests/test_a.py::test_x", "tests/unit"), False, True),
    ("sh -c 'cd /work && pytest -k fast tests'", ("tests",), True, False),
    ("python -m unittest discover -s tests", ("tests",), False, False),
    ("python -m unittest -f tests.test_shelf", ("tests.test_shelf",), False, True),
    ("make check", (), False, False),
    ('pytest -k "fast and not db" tests/x.py', ("tests/x.py",), True, False),
    ('pytest -m "not slow" tests', ("tests",), True, False),
    ("bash -lc 'pytest -x tests/unit'", ("tests/unit",), False, True),
])
def test_a_commands_scope(command, paths, selecting, stops):
    scope = testruns.scope(command)
    assert (scope.paths, scope.selecting, scope.stops) == (paths, selecting, stops)


def test_scopes_cover_the_tests_inside_them():
    whole, one_file = testruns.Scope(), testruns.Scope(("tests/test_a.py",))
    assert whole.covers("tests/test_b.py::test_y") and whole.includes(one_file)
    assert one_file.covers("tests/test_a.py::TestA::test_x[1]")
    assert not one_file.covers("tests/test_ab.py::test_x") and not one_file.includes(whole)
    assert testruns.Scope(("tests",)).covers("tests.test_shelf.Shelf.test_ok")
    picked = testruns.Scope(("tests",), selecting=True)
    assert not picked.covers("tests/test_a.py::test_x") and not whole.includes(picked)


def turn_with_runs(index: int, *runs: tuple[str, str]) -> Turn:
    """A committed turn whose tool loop ran ``(command, output)`` pairs."""
    calls = [{"function": "run", "args": {"command": command}, "ok": "failed" not in out,
              "result": out, "step": n} for n, (command, out) in enumerate(runs, 1)]
    return Turn(index, f"turn {index}: please run the tests", "I ran them.",
                meta={"tools": {"calls": calls, "steps": len(calls)}})


def cards_for(tmp_path, embedder, script) -> object:
    script.default = json.dumps({"facts": []})
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                     data_dir=tmp_path / "home", session_id="s")
    return registry.create("cards", env)


def current(cards, kind: str) -> list:
    return [n for n in cards.graph.current() if n.type == kind]


async def test_a_run_over_part_of_the_suite_revises_only_what_it_covers(
        project, tmp_path, embedder, script):
    cards = cards_for(tmp_path, embedder, script)
    whole = "python -m pytest -q tests/test_calc.py"
    await cards.observe(turn_with_runs(0, (whole, run(project, *PYTEST, "-q",
                                                      "tests/test_calc.py"))))
    failing = {n.subject for n in current(cards, "failure")}
    assert failing == {"tests/test_calc.py::test_add", "tests/test_calc.py::test_param[2]",
                       "tests/test_calc.py::TestBox::test_open",
                       "tests/test_calc.py::test_uses_broken"}
    [unit] = current(cards, "tests")
    assert "3 failed, 1 errors, 2 passed, 1 skipped" in unit.content
    assert "tests/test_calc.py::test_add (assert -1 == 5)" in unit.content
    # one test file's class, run alone, passes here only for what it covers: a selection
    # (-k) revises nothing it does not name, a path revises what lies in it
    one = "tests/test_calc.py::test_sub"
    await cards.observe(turn_with_runs(1, ("python -m pytest -q -k sub",
                                           run(project, *PYTEST, "-q", "-k", "sub",
                                               "tests/test_calc.py")),
                                       (f"python -m pytest -q {one}",
                                        run(project, *PYTEST, "-q", one))))
    assert {n.subject for n in current(cards, "failure")} == failing
    assert len(current(cards, "tests")) == 3  # none of the three scopes includes another
    again = run(project, *PYTEST, "-v", "tests/test_calc.py::test_add")
    await cards.observe(turn_with_runs(2, ("python -m pytest -v tests/test_calc.py::test_add",
                                           again)))
    old = cards.graph.nodes["fail:0:run1:0"]
    assert not old.current and old.superseded_by == "fail:2:run1:0"  # it failed again
    assert cards.graph.nodes["fail:2:run1:0"].content.startswith(
        "test tests/test_calc.py::test_add failed: assert -1 == 5")
    assert cards.graph.nodes["fail:0:run1:1"].current  # outside that run's scope


async def test_only_a_call_that_ran_a_command_is_read_as_a_run(project, tmp_path, embedder,
                                                               script):
    cards = cards_for(tmp_path, embedder, script)
    log = run(project, *PYTEST, "-q", "tests/test_calc.py")
    shown = Turn(0, "turn 0: what does the log say?", "It lists failures.", meta={"tools": {
        "calls": [{"function": "search_code", "args": {"query": "failed"}, "ok": True,
                   "result": log, "step": 1}], "steps": 1}})
    await cards.observe(shown)
    assert current(cards, "tests") == [] and current(cards, "failure") == []
    ran = Turn(1, "turn 1: and in a shell?", "Four fail.", meta={"tools": {
        "calls": [{"function": "Bash", "args": {"command": "pytest -q tests/test_calc.py"},
                   "ok": False, "result": log, "step": 1}], "steps": 1}})
    await cards.observe(ran)
    [unit] = current(cards, "tests")
    assert unit.content.startswith("tests `pytest -q tests/test_calc.py` (tests/test_calc.py)")
    assert len(current(cards, "failure")) == 4


async def test_a_later_passing_run_revises_the_failure_cards(project, tmp_path, embedder,
                                                             script):
    cards = cards_for(tmp_path, embedder, script)
    await cards.observe(turn_with_runs(0, ("python -m unittest tests.test_shelf",
                                           run(project, "unittest", "tests.test_shelf"))))
    bad = next(n for n in current(cards, "failure") if n.subject.endswith("test_bad"))
    fixed = tmp_path / "fixed"
    (fixed / "tests").mkdir(parents=True)
    (fixed / "tests" / "__init__.py").write_text("")
    (fixed / "tests" / "test_shelf.py").write_text(
        UNITTESTS.replace("assertEqual(1, 2)", "assertEqual(2, 2)").replace(
            '{}["missing"]', 'self.assertIsNone({}.get("missing"))'))
    await cards.observe(turn_with_runs(1, ("python -m unittest tests.test_shelf",
                                           run(fixed, "unittest", "tests.test_shelf"))))
    assert current(cards, "failure") == []
    [unit] = current(cards, "tests")
    assert bad.superseded_by == unit.id
    assert "Passing now: tests.test_shelf.Shelf.test_" in unit.content
    assert "(failed at turn 0)" in unit.content
    records = cards.drain_records()
    assert any(r["op"] == "SUPERSEDE" and r["id"] == bad.id for r in records)
    await cards.context("does test_bad pass in tests.test_shelf?", budget=3000)
    shown = [c.node_id for c in cards.last_pack.cards]
    assert unit.id in shown and bad.id not in shown
    [card] = [c for c in cards.last_pack.cards if c.node_id == unit.id]
    assert card.revises == "revises turn 0"  # two failures and the earlier run


jail = pytest.mark.skipif(bwrap.available() is not None,
                          reason=f"no OS jail here: {bwrap.available()}")

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = ("from app.calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_zero():\n"
         "    assert add(0, 0) == 0\n")


@jail
async def test_the_agents_test_runs_in_the_jail_reach_the_cards(tmp_path, embedder, script):
    """Three turns: the model runs the tests (two fail); the developer fixes mul and the
    model runs them with -x (stopped at add: mul's card stays, it cannot tell); add is
    fixed and a complete run passes: both failure cards are revised by the run."""
    root = make_repo(tmp_path / "repo", {"app/__init__.py": "", "app/calc.py": CALC,
                                         "tests/test_calc.py": TESTS})
    index = RepoIndex(root, Store(tmp_path / "index.lance"), embedder)
    index.refresh()
    commands = ["python -m pytest -q -p no:cacheprovider", "tests", "tests"]
    taken: dict[int, int] = {}

    def model(messages):
        system = messages[0]["content"]
        if system.startswith(FACT_PROMPT[:50]):
            return json.dumps({"facts": []})
        turn = int(messages[-1]["content"].split(":")[0].split()[-1])
        if asked(messages).step:
            taken[turn] = taken.get(turn, 0) + 1
            if taken[turn] == 1:
                return json.dumps({"call": {"function": "run", "command": commands[turn],
                                            "request_heartbeat": False}})
            return json.dumps({"call": {"function": "answer"}})
        return "Here is what the run said."

    script.default = model
    llm = LLM(LLMConfig(model="scripted/t", backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, repo=index, data_dir=tmp_path / "home",
                     session_id="s")
    agent = Agent(registry.create("cards", env), llm, env,
                  config=AgentConfig(max_answer_tokens=128, max_tool_steps=3))
    agent.tools = RepoTools(root, index, RunTool(root, ConsentPolicy.preallowed(), TreeJail(),
                                                 Limits(timeout=120)))
    cards = agent.backend
    done = await agent.ask("turn 0: how do the tests look?")
    assert done.ok and done.meta["tools"]["calls"][0]["returncode"] == 1, done.meta
    failing = {n.subject: n for n in current(cards, "failure")}
    assert set(failing) == {"tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"}
    assert failing["tests/test_calc.py::test_add"].locations == ["tests/test_calc.py::test_add"]
    assert "assert -1 == 5" in failing["tests/test_calc.py::test_add"].content
    (root / "app/calc.py").write_text(CALC.replace("return a + b", "return a * b"))
    git(root, "commit", "-qam", "mul multiplies")
    await agent.ask("turn 1: and the tests?")
    assert {n.subject for n in current(cards, "failure")} == set(failing)
    assert not failing["tests/test_calc.py::test_add"].current  # failed again: revised
    assert failing["tests/test_calc.py::test_mul"].current  # -x stopped before it
    (root / "app/calc.py").write_text(CALC.replace("return a + b", "return a * b")
                                      .replace("return a - b", "return a + b"))
    git(root, "commit", "-qam", "add adds")
    done = await agent.ask("turn 2: once more?")
    assert done.meta["tools"]["calls"][0]["returncode"] == 0
    assert current(cards, "failure") == []
    [unit] = current(cards, "tests")
    assert "3 passed" in unit.content and "Passing now:" in unit.content
    assert failing["tests/test_calc.py::test_mul"].superseded_by == unit.id
