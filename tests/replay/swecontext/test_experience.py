"""``experience`` (SWE-ContextBench): chains from the targets, the five settings, the report."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from replay.cli.command import main
from replay.core.errors import SourceError
from replay.core.sources import load_source
from replay.locoeval import DEMO
from replay.reporting.report import summarize, table
from replay.swecontext.experience import SETTINGS, load_experience
from tests.replay.experience_reader import ExperienceReader

CHAINS = DEMO / "experience" / "inventory-chains.json"


def test_chains_are_built_from_the_targets_calls(tmp_path, capsys):
    out = tmp_path / "chains"
    assert main(["build", str(DEMO / "inventory"), "--targets", str(DEMO / "targets.json"),
                 "--experience", "--out", str(out)]) == 0
    built = load_experience(next(out.glob("*.json")))
    assert json.loads(next(out.glob("*.json")).read_text())["experience"] == \
        json.loads(CHAINS.read_text())["experience"]  # the bundled file is this build
    functions = {t.id: t.function for t in built.experience}
    related = {t.function: {functions[d] for d in t.depends_on} for t in built.related}
    assert related["order_total"] == {"normalize_sku", "parse_price"}  # it calls both
    assert related["Stock.remove"] == {"normalize_sku"}
    for task in built.related:  # what it needs is said in its experience tasks
        facts = {f for d in task.depends_on for f in built.task(d).facts}
        assert task.needs and set(task.needs) <= facts


@pytest.fixture(scope="module")
def demo_results(tmp_path_factory):
    from tests.conftest import SCRIPT, _register_scripted

    _register_scripted()
    chains = load_experience(CHAINS)
    reader = ExperienceReader(chains, DEMO / "inventory")
    SCRIPT.queue.clear()
    SCRIPT.default = reader
    SCRIPT.count_prompt = True
    out = tmp_path_factory.mktemp("exp") / "run"
    try:
        code = main(["demo", "experience", "--backends", "full,rag", "--model", "scripted/t",
                     "--out", str(out), "--max-tokens", "256", "--test-timeout", "30"])
    finally:
        SCRIPT.default = "scripted answer"
        SCRIPT.count_prompt = False
    return code, json.loads((out / "results.json").read_text()), out, reader


def test_oracle_summary_reuse_resolves_what_no_experience_cannot(demo_results):
    code, results, _, reader = demo_results
    assert code == 0
    rows = results["experience"]
    for backend in ("full", "rag"):
        none, oracle = rows[f"{backend} · none"], rows[f"{backend} · oracle-summary"]
        assert oracle["resolved"] >= none["resolved"]
        # the repository copy lacks the earlier functions: only their experience helps
        assert none["resolved"] == 0.0 and oracle["resolved"] == 1.0
        assert rows[f"{backend} · oracle"]["resolved"] == 1.0
        assert oracle["tokens_ratio"] > 1.0  # what it costs
        assert set(SETTINGS) == {k.split(" · ")[1] for k in rows if k.startswith(backend)}
    # full's memory holds the whole pool: free reuse finds the facts; pool costs tokens
    assert rows["full · free"]["resolved"] == 1.0 and rows["full · free"]["pool_tokens"] == 0
    runs = {r["backend"]: r for r in results["runs"]}
    experience = runs["full"]["experience"]
    assert all(t["resolved"] for t in experience["experience_tasks"].values())
    assert all(20 <= len(s.split()) <= 250 for s in experience["summaries"].values())
    assert ("r3", "stub") in reader.written and ("r3", "code") in reader.written


def test_experience_results_table_and_resume(demo_results, script):
    _, results, out, _ = demo_results
    console = Console(file=io.StringIO(), width=220)
    console.print(table(summarize(results["runs"])))
    shown = console.file.getvalue()
    assert "experience: related tasks by setting" in shown and "full · oracle-summary" in shown
    assert "Δ resolved vs none ↑" in shown
    assert (out / "chart.png").exists()
    from replay.reporting.chart import charts
    from replay.swecontext.chart import experience_png

    summary = summarize(results["runs"])
    png = charts(summary, results["runs"]).get("chart.png")
    assert png is not None and png == experience_png(summary["experience"])  # its own chart
    assert experience_png({}) is None
    script.default = "Noted."
    code = main(["demo", "experience", "--backends", "full,rag", "--model", "scripted/t",
                 "--out", str(out), "--resume"])
    assert code == 0 and script.calls == []  # finished pairs are not run again


def test_a_broken_chain_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "chains.json"
    data = json.loads(CHAINS.read_text())
    data["related"][0]["depends_on"] = ["e9"]
    path.write_text(json.dumps(data))
    with pytest.raises(SourceError, match="depends on"):
        load_source(path)
    assert main([str(path), "--backends", "full", "--model", "scripted/t"]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert main([str(CHAINS), "--experience-settings", "none,sometimes", "--model",
                 "scripted/t"]) == 2
    assert "unknown experience setting" in capsys.readouterr().err
