"""``engram replay score`` on a hand-made fixture in CodeIF-Bench's published layout: the
verdicts written by hand in expected.json come back, in both of the benchmark's modes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from replay.cli.command import main
from replay.codeif.score import load_answers
from replay.codeif.source import load_iterative

FIXTURE = Path(__file__).parents[1] / "fixtures" / "codeif"
PUBLISHED = "multi_round/handmade/handmade03.jsonl"
OWN = "own/answers.jsonl"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())


def _score(tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "score.json"
    code = main(["score", str(FIXTURE), "--tasks", str(FIXTURE / "function.jsonl"),
                 "--out", str(out), *extra])
    assert code == 0
    return {str(Path(k).relative_to(FIXTURE)): v
            for k, v in json.loads(out.read_text())["files"].items()}


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _score(tmp_path_factory.mktemp("score"))


def _verdicts(data: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    return [v for v in data["verdicts"] if v["mode"] == mode]


@pytest.mark.parametrize("mode", ["category", "cumulative"])
def test_published_layout_verdicts_reproduced(scored, mode):
    got = {(v["task_id"], v["category"]): v["passed"] for v in _verdicts(scored[PUBLISHED], mode)}
    want = {(e["task_id"], e["requirement"]): e[mode] for e in EXPECTED[PUBLISHED]}
    assert got == want
    assert scored[PUBLISHED]["answers"] == len(EXPECTED[PUBLISHED])


@pytest.mark.parametrize("mode", ["category", "cumulative"])
def test_own_layout_verdicts_reproduced(scored, mode):
    got = {(v["task_id"], v["turn"], v["sample"]): v["passed"]
           for v in _verdicts(scored[OWN], mode)}
    want = {(e["task_id"], e["turn"], e["sample"]): e[mode] for e in EXPECTED[OWN]}
    assert got == want


def test_the_benchmarks_own_verdict_files_are_compared(scored):
    data = scored[PUBLISHED]
    assert data["benchmark_mode"] == "category"  # it graded Functionality Extension
    category = _verdicts(data, "category")
    assert all(v["benchmark"] is not None for v in category)
    assert data["summary"]["modes"]["category"]["total"]["agree"] == len(category)
    assert all(v["benchmark"] is None for v in _verdicts(data, "cumulative"))


def test_engram_preparation_judges_differently(tmp_path):
    data = _score(tmp_path, "--code-prep", "engram", "--mode", "category")[PUBLISHED]
    got = {(v["task_id"], v["category"]): v["passed"] for v in data["verdicts"]}
    assert got[("1", "Code Standard")] is False  # the long docstring line stays: E501
    assert got[("2", "Input-Output Conditions")] is True  # the ```py block is found
    assert data["summary"]["modes"]["category"]["total"]["agree"] == 7


def test_per_turn_scores_and_pass_at_k(scored):
    summary = scored[OWN]["summary"]
    assert summary["ks"] == [1, 2]
    cumulative = summary["modes"]["cumulative"]["by_turn"]
    # sample 0 passes every turn; sample 1 fails the base ('y'), then passes the base but
    # not PEP 8, then passes base + PEP 8 but not the type check (hand-computed)
    assert [cumulative[t]["passed"] for t in "012"] == [1, 1, 1]
    assert [cumulative[t]["pass@1"] for t in "012"] == [0.5, 0.5, 0.5]
    assert [cumulative[t]["pass@2"] for t in "012"] == [1.0, 1.0, 1.0]
    assert [cumulative[t]["ia"] for t in "012"] == [0.5, 0.5, 0.5]
    assert cumulative["1"]["ca"] == pytest.approx((1 + 1 / 2) / 2)
    assert cumulative["2"]["ca"] == pytest.approx((1 + 2 / 3) / 2)
    assert cumulative["0"]["ifr"] is None and cumulative["2"]["ifr"] == 0.0
    published = scored[PUBLISHED]["summary"]["modes"]
    assert published["cumulative"]["by_category"]["Functionality Extension"]["answers"] == 0
    assert published["category"]["by_turn"]["1"]["ca"] is None  # not defined in that mode


def test_tables_render_per_turn_columns(tmp_path, capsys):
    _score(tmp_path, "--mode", "cumulative")
    out = capsys.readouterr().out
    assert "cumulative mode · by turn" in out and "IFR" in out and "pass@2" in out
    assert "category mode ·" not in out


def test_bad_lines_are_reported_not_fatal(tmp_path):
    tasks = {t.id: t for t in load_iterative(FIXTURE / "function.jsonl")}
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join([
        json.dumps({"task_id": 1, "requirement": "Exception Handling", "completion": "x"}),
        json.dumps({"task_id": 99, "turn": 0, "answer": "x"}),
        json.dumps({"task_id": 1, "requirement": "Nope", "completion": "x"}),
        json.dumps({"task_id": 1, "turn": 9, "answer": "x"}),
        "{torn", json.dumps({"task_id": 1, "turn": 0, "answer": "a"}),
        json.dumps({"task_id": 1, "turn": 0, "answer": "b"})]))
    answers, problems = load_answers(path, tasks)
    assert [(a.turn, a.sample, a.layout) for a in answers] == [(1, 0, "codeif"),
                                                                (0, 0, "engram"),
                                                                (0, 1, "engram")]
    assert len(problems) == 4
    assert main(["score", str(tmp_path / "missing"), "--tasks",
                 str(FIXTURE / "function.jsonl")]) == 2


def test_console_is_plain_text_renderable():
    from rich.console import Console

    from replay.codeif._score_report import summarize, tables

    rows = [{"task_id": "1", "turn": 0, "category": "base", "sample": 0, "mode": "cumulative",
             "passed": True, "ia": 1.0, "ca": 1.0, "ifr": None, "benchmark": None}]
    console = Console(file=io.StringIO(), width=120)
    for table in tables({"summary": summarize(rows)}):
        console.print(table)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "base" in text and "1.00" in text
