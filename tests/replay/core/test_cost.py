"""Dollars per pair and per backend from litellm's cost map, and --budget-usd."""

from __future__ import annotations

import io
import json

import pytest

from replay.core.cost import Budget, pricing
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.reporting.report import summarize, table
from tests.replay.conftest import perfect_reply

PRICED = "scripted/gpt-4o-mini"  # the scripted model, priced as the real one by litellm
IN, OUT = 0.15e-6, 0.6e-6  # gpt-4o-mini in litellm's local cost map, $ per token


def config(tmp_path, backends, **kw):
    return ReplayConfig(backends=backends, model=PRICED, out=tmp_path / "run",
                        max_tokens=128, **kw)


def dollars(usage):
    return sum(c["prompt_tokens"] * IN + c["completion_tokens"] * OUT for c in usage.values())


async def test_every_call_is_priced_and_split_by_purpose(tmp_path, outline_file, script,
                                                         embedder):
    script.default, script.count_prompt = perfect_reply, True
    replay = Replay(config(tmp_path, ["full", "mem0"]), embedder=embedder)
    try:
        pairs = await replay.run(load_source(outline_file))
    finally:
        replay.close()
    by = {p["backend"]: p for p in pairs}
    for row in pairs:
        cost = row["cost"]
        assert cost["total"] == pytest.approx(dollars(row["usage"]))
        assert cost["answer"] == pytest.approx(dollars({"a": row["usage"]["answer"]}))
        assert cost["mock_user"] == 0.0 and cost["judge"] == 0.0  # template user, MiniLM
    assert by["full"]["cost"]["memory"] == 0.0
    assert by["mem0"]["cost"]["memory"] > 0  # mem0's extraction and update calls
    summary = summarize(pairs)
    assert summary["backends"]["mem0"]["cost_usd"] == pytest.approx(by["mem0"]["cost"]["total"])
    assert summary["backends"]["mem0"]["cost_split"]["memory"] == \
        pytest.approx(by["mem0"]["cost"]["memory"])


def test_pricing_says_which_models_cost_nothing():
    assert pricing("openai/gpt-4o-mini") == "litellm cost map"
    assert pricing(PRICED) == "litellm cost map (as gpt-4o-mini)"
    assert pricing("scripted/t") == "not in litellm's cost map: counted as $0"
    assert pricing("local/smollm2") == "embedded local model: $0"


def test_the_table_shows_dollars_and_the_pricing_line():
    from rich.console import Console

    rows = [{"source": "s", "backend": "full", "error": None,
             "cost": {"answer": 0.25, "memory": 0.0, "mock_user": 0.0, "judge": 0.0,
                      "total": 0.25}},
            {"source": "t", "backend": "full", "error": None,
             "cost": {"answer": 0.5, "memory": 0.25, "mock_user": 0.0, "judge": 0.0,
                      "total": 0.75}}]
    summary = {**summarize(rows), "pricing": {"scripted/t": pricing("scripted/t")}}
    assert summary["backends"]["full"]["cost_per_pair"] == 0.5
    console = Console(file=io.StringIO(), width=200)
    console.print(table(summary))
    text = console.file.getvalue()
    assert "$0.5000" in text and "$1.0000" in text
    assert "pricing: scripted/t: not in litellm's cost map: counted as $0" in text


def test_budget_projects_from_finished_pairs():
    budget = Budget(limit=1.0)
    first = budget.start("a", "full")
    assert first is not None and budget.projected("full") == 0.0  # nothing known yet
    budget.finish("full", 0.4, first)
    second = budget.start("b", "full")
    assert second is not None  # 0.4 spent + 0.4 expected
    assert budget.start("c", "full") is None  # 0.4 + 0.4 running + 0.4 > 1.0
    assert budget.start("d", "empty") is None  # stopped: nothing later starts
    assert budget.report() == {"limit_usd": 1.0, "spent_usd": 0.4, "stopped": True,
                               "skipped": ["c__full", "d__empty"]}


async def test_budget_stops_launching_and_resume_finishes(tmp_path, outline_file, script,
                                                          embedder):
    script.default, script.count_prompt = perfect_reply, True
    replay = Replay(config(tmp_path, ["empty"]), embedder=embedder)
    try:
        one = (await replay.run(load_source(outline_file)))[0]["cost"]["total"]
    finally:
        replay.close()
    assert one > 0
    limited = Replay(config(tmp_path, ["empty", "full", "rag"], resume=True,
                            budget_usd=one * 1.5), embedder=embedder)
    try:
        pairs = await limited.run(load_source(outline_file))
    finally:
        limited.close()
    assert {p["backend"] for p in pairs} == {"empty"}  # empty on record counts as spent
    report = limited.budget.report()
    assert report["stopped"] and report["skipped"] == ["shop-2__full", "shop-2__rag"]
    again = Replay(config(tmp_path, ["empty", "full", "rag"], resume=True, budget_usd=1.0),
                   embedder=embedder)
    try:
        pairs = await again.run(load_source(outline_file))
    finally:
        again.close()
    assert {p["backend"] for p in pairs} == {"empty", "full", "rag"}
    assert not again.budget.report()["stopped"]


def test_cli_reports_budget_and_pricing(tmp_path, outline_file, script, capsys):
    from tui.cli import main

    script.default = perfect_reply
    out = tmp_path / "cli"
    assert main(["replay", str(outline_file), "--backends", "empty,full", "--model", PRICED,
                 "--out", str(out), "--budget-usd", "0.000001"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["pricing"] == {PRICED: "litellm cost map (as gpt-4o-mini)"}
    assert results["budget"]["stopped"] and results["budget"]["skipped"] == ["shop-2__full"]
    assert "budget: $" in capsys.readouterr().out
