"""CodeIF-Bench as published: its test lists, its two grading modes, its code preparation,
IA without test-less turns, the test timeout, methods found inside their class."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from replay.cli.command import _config, build_parser
from replay.codeif._codeif import IterativeOptions, codeif_code, follow, graded_turns
from replay.codeif.grade import grade_turn, iterative_scores, passed_tests
from replay.codeif.source import Iterative, Step
from replay.core.sources import load_source
from replay.locoeval.tasks import extract_target
from replay.sandbox.asserts import run_tests
from replay.sandbox.sandbox import Limits

FIXTURE = Path(__file__).parents[1] / "fixtures" / "codeif"
LIMITS = Limits(timeout=10.0)
LONG_DOC = ('```python\ndef rect_area(w, h):\n    """\n    Return the area of the rectangle '
            'whose sides are w and h, the two numbers multiplied.\n    """\n    return w * h\n'
            '```\nPEP 8 throughout.')


@pytest.fixture(scope="module")
def tasks() -> dict[str, Iterative]:
    return {t.id: t for t in load_source(FIXTURE / "function.jsonl")}  # type: ignore[misc]


def test_a_test_given_as_one_string_is_one_test(tasks):
    standard = tasks["1"].steps[-1]
    assert standard.category == "Code Standard"
    assert len(standard.tests) == 1 and "pycodestyle" in standard.tests[0]
    assert tasks["3"].steps[0].tests == ("assert count_vowels('Banana') == 3\n"
                                         "assert count_vowels('xyz') == 0",)


def test_requirements_missing_from_multi_turn_are_loaded_last(tasks):
    steps = tasks["1"].steps
    assert [s.category for s in steps] == [None, "Exception Handling",
                                           "Functionality Extension", "Code Complexity",
                                           "Code Standard"]
    assert [s.listed for s in steps[1:]] == [True, True, True, False]


def test_the_two_modes_pick_the_benchmarks_tests(tasks):
    task = tasks["1"]  # 0 base, 1 EH, 2 FE, 3 CC, 4 CS
    assert graded_turns(task, 1, "category") == [0, 1]
    assert graded_turns(task, 2, "category") == [2]  # Functionality Extension alone
    assert graded_turns(task, 4, "category") == [0, 4]
    assert graded_turns(task, 2, "cumulative") is None  # skipped
    assert graded_turns(task, 4, "cumulative") == [0, 1, 3, 4]  # FE's tests never join
    assert graded_turns(task, 4, "all") == [0, 1, 2, 3, 4]


def test_codeif_preparation_first_python_block_no_docstrings_no_blank_lines():
    answer = ("Intro\n```python\ndef f(x):\n    \"\"\"\n    Doc.\n    \"\"\"\n\n    return x\n"
              "```\nand\n```python\nprint(f(1))\n```")
    assert codeif_code(answer) == "def f(x):\n    return x"
    assert codeif_code("```py\ndef f():\n    return 1\n```") == \
        "```py\ndef f():\n    return 1\n```"  # no ```python block: the whole answer


def test_code_standard_judged_as_the_benchmark_judges_it(tasks):
    task = tasks["1"]
    tests = list(task.steps[0].tests + task.steps[4].tests)
    assert passed_tests(LONG_DOC, tests, LIMITS, "codeif") == {0, 1, 2}
    assert passed_tests(LONG_DOC, tests, LIMITS, "engram") == {0, 1}  # E501 in the docstring


def test_code_complexity_and_standard_tests_can_fail(tasks):
    two_ifs = ("```python\ndef rect_area(w, h):\n    if w < 0:\n        raise ValueError('w')\n"
               "    if h < 0:\n        raise ValueError('h')\n    return w * h\n```")
    graded = grade_turn(tasks["1"], 3, two_ifs, LIMITS, IterativeOptions("category", "codeif"))
    assert graded.graded == ["0.0", "0.1", "3.0"] and graded.passed == {"0.0", "0.1"}
    assert graded.verdict is False


def test_the_sandbox_has_the_benchmarks_linters():
    assert run_tests("import mccabe\nimport pycodestyle", ["assert mccabe.PathGraphingAstVisitor",
                                                           "assert pycodestyle.Checker"],
                     LIMITS) == {0, 1}


def test_test_timeout_is_honoured_for_iterative_tasks():
    config = _config(build_parser().parse_args(["x.jsonl", "--test-timeout", "1.5"]))
    assert config.benchmark_options["codeif"]["test_timeout"] == 1.5
    assert config.limits.timeout == 1.5
    default = _config(build_parser().parse_args(["x.jsonl"]))
    assert default.benchmark_options["codeif"]["test_timeout"] == 10.0
    assert default.limits.timeout == 60.0
    task = Iterative("loop", (Step("spin", ("assert spin() == 1",)),))
    started = time.monotonic()
    graded = grade_turn(task, 0, "```python\ndef spin():\n    while True:\n        pass\n```",
                        Limits(timeout=1.0))
    assert graded.verdict is False and time.monotonic() - started < 8


def test_ia_leaves_out_a_turn_without_tests():
    task = Iterative("t", (Step("write f", ("assert f() == 1",)), Step("explain it", ()),
                           Step("make it 2", ("assert f() == 2",))))
    answers = ["```python\ndef f():\n    return 1\n```"] * 2 + ["```python\ndef f():\n"
                                                            "    return 2\n```"]
    graded = [grade_turn(task, n, a, LIMITS) for n, a in enumerate(answers)]
    scores = iterative_scores(graded)
    assert scores["turns"]["ia"] == [1.0, None, 1.0]  # not 0 for the turn with no tests
    assert scores["ia"] == [1.0, 1.0]
    assert scores["turns"]["ca"] == [1.0, 1.0, 0.5]
    assert scores["turns"]["ifr"] == [None, 0.0, 1.0]  # f() == 1 was passed, now fails
    assert scores["ifr"] == [0.0, 0.0, 1.0] and scores["verdicts"] == [True, True, False]


def test_follow_skips_ungraded_turns():
    out = follow([["0.0"], ["1.0"], ["2.0"]], [["0.0"], None, ["0.0", "2.0"]],
                 [{"0.0"}, None, {"2.0"}])
    assert out[1] is None
    assert (out[2].ia, out[2].ca, out[2].ifr) == (1.0, 0.5, 1.0)


def test_the_extractor_finds_a_method_inside_its_class():
    answer = ("```python\nclass Cart:\n    def __init__(self):\n        self.lines = []\n\n"
              "    def total(self):\n        return sum(self.lines)\n```")
    assert extract_target(answer, "Cart.total") == "def total(self):\n    return sum(self.lines)"
    renamed = answer.replace("class Cart:", "class ShoppingCart:")
    assert extract_target(renamed, "Cart.total") == \
        "def total(self):\n    return sum(self.lines)"
    top = "```python\ndef total(self):\n    return 0\n```"
    assert extract_target(top, "Cart.total") == "def total(self):\n    return 0"
    assert extract_target("no code", "Cart.total") is None
    assert extract_target(answer, "Cart.missing") is None


async def test_a_replay_grades_iterative_turns_in_the_chosen_mode(tmp_path, script, embedder):
    from replay.core.runner import Replay, ReplayConfig

    path = tmp_path / "own.json"
    path.write_text(json.dumps({"tasks": [{"id": "f", "turns": [
        {"instruction": "write f returning 1", "tests": ["assert f() == 1"]},
        {"instruction": "why?", "tests": []},
        {"instruction": "make it 2", "tests": ["assert f() == 2"]}]}]}))
    script.push("```python\ndef f():\n    return 1\n```", "Because.",
                "```python\ndef f():\n    return 2\n```")
    config = ReplayConfig(backends=["full"], model="scripted/t", out=tmp_path / "run",
                          max_tokens=64,
                          benchmark_options={"codeif": {"mode": "cumulative",
                                                        "prepare": "codeif",
                                                        "test_timeout": LIMITS.timeout}})
    replay = Replay(config, embedder=embedder)
    try:
        pairs = await replay.run(load_source(path))
    finally:
        replay.close()
    it = pairs[0]["iterative"]
    assert it["turns"]["ia"] == [1.0, None, 1.0]  # "Because." has no tests: no IA, not 0
    assert it["verdicts"] == [True, False, False]  # turn 1's answer has no code at all
    assert it["turns"]["ifr"] == [None, 1.0, 1.0]
