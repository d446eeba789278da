"""`engram replay report RUN_DIR...`: runs merged, numbers checked by hand."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from replay.codeif.chart import turn_means
from replay.reporting.merge import MergeError, main, merge, merged_summary

PNG = b"\x89PNG\r\n\x1a\n"


def pair(source: str, backend: str, passed: dict[str, bool], extract: dict[str, float],
         topic: float, prompt: int, cost: float, subset: str, length: int,
         error: str | None = None) -> dict[str, Any]:
    return {"source": source, "backend": backend, "kind": "outline", "error": error,
            "subset": subset, "k": len(passed), "l": length,
            "scores": {"passed": passed, "extract_f1": extract, "topic_f1": topic},
            "usage": {"answer": {"prompt_tokens": prompt, "completion_tokens": 10,
                                 "cost": cost, "calls": 1}},
            "cost": {"answer": cost, "memory": 0.0, "mock_user": 0.0, "judge": 0.0,
                     "total": cost}}


def write_run(folder: Path, rows: list[dict[str, Any]], model: str | None = "m",
              torn: bool = False) -> str:
    folder.mkdir(parents=True)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (folder / "pairs.jsonl").write_text(text + ('{"source": "s9", "backe' if torn else ""))
    if model:
        (folder / "results.json").write_text(json.dumps({"config": {"model": model}}))
    return str(folder)


@pytest.fixture
def runs(tmp_path) -> list[str]:
    """Run A: outline s1 (single-hop, k=2, l=34); run B, a shard killed mid-write: s2
    (multi-hop, k=1, l=52), and s1 x full again but failed."""
    a = write_run(tmp_path / "a", [
        pair("s1", "full", {"a": True, "b": False}, {"a": 0.5, "b": 1.0}, 0.5, 100, 0.10,
             "single-hop", 34),
        pair("s1", "empty", {"a": False, "b": False}, {"a": 0.0, "b": 0.5}, 0.0, 20, 0.02,
             "single-hop", 34),
        pair("s1", "oracle", {"a": True, "b": True}, {"a": 1.0, "b": 1.0}, 1.0, 50, 0.05,
             "single-hop", 34)])
    b = write_run(tmp_path / "b", [
        pair("s2", "full", {"c": True}, {"c": 1.0}, 1.0, 300, 0.30, "multi-hop", 52),
        pair("s2", "empty", {"c": False}, {"c": 0.0}, 0.0, 60, 0.06, "multi-hop", 52),
        pair("s2", "oracle", {"c": True}, {"c": 1.0}, 1.0, 100, 0.10, "multi-hop", 52),
        pair("s1", "full", {}, {}, 0.0, 5, 0.01, "single-hop", 34, error="boom")],
        torn=True)
    return [a, b]


def test_merge_keeps_one_row_per_pair_and_a_failure_never_replaces_a_success(runs):
    merged = merge(runs)
    assert len(merged.rows) == 6 and merged.replaced == 1 and merged.models == ["m"]
    kept = [r for r in merged.rows if (r["source"], r["backend"]) == ("s1", "full")]
    assert len(kept) == 1 and kept[0]["error"] is None and kept[0]["run"] == runs[0]


def test_report_merges_two_runs_of_one_model(tmp_path, runs, capsys):
    out = tmp_path / "report"
    assert main([*runs, "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["models"] == ["m"] and results["replaced_pairs"] == 1
    full, empty, oracle = (results["backends"][n] for n in ("full", "empty", "oracle"))
    assert full["pairs"] == 2 and full["errors"] == 0  # run A's s1 x full, not B's failure
    assert full["pass@1"] == pytest.approx(2 / 3)  # a, c of a, b, c
    assert empty["pass@1"] == 0.0 and oracle["pass@1"] == 1.0
    assert full["normalized_pass@1"] == pytest.approx(100 * 2 / 3)
    assert full["extract_f1"] == pytest.approx((0.5 + 1.0 + 1.0) / 3)
    assert full["topic_f1"] == pytest.approx(0.75)
    assert full["normalized_topic_f1"] == pytest.approx(75.0)  # (0.75 - 0) / (1 - 0)
    assert empty["compression"] == pytest.approx((100 + 300) / (20 + 60))
    assert oracle["compression"] == pytest.approx(400 / 150)
    assert full["cost_usd"] == pytest.approx(0.40) and full["cost_per_pair"] == 0.2
    assert set(results["by_subset"]) == {"single-hop", "multi-hop"}
    assert results["by_subset"]["single-hop"]["full"]["pass@1"] == 0.5
    assert results["by_k"]["1"]["full"]["pass@1"] == 1.0
    assert list(results["by_l"]) == ["[30, 40)", "[50, 60)"]
    assert results["by_l"]["[30, 40)"]["full"]["normalized_pass@1"] == pytest.approx(50.0)
    for name in ("chart.png", "normalized.png"):
        assert (out / name).read_bytes()[:8] == PNG
    page = (out / "report.html").read_text()
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(images) == 2 and all(base64.b64decode(i)[:8] == PNG for i in images)
    assert "http" not in page.split("<body>", 1)[1].replace("http-equiv", "")  # self-contained
    assert "pass@1" in page and "67%" in page  # the table, with full's normalized pass@1
    printed = capsys.readouterr().out
    assert "model m: 6 pairs" in printed


def test_runs_of_two_models_are_reported_side_by_side(tmp_path, runs):
    other = write_run(tmp_path / "c", [  # no results.json: its rows name their model
        {**pair("s1", "full", {"a": True}, {"a": 1.0}, 1.0, 10, 0.0, "single-hop", 34),
         "model": "m2"}], model=None)
    out = tmp_path / "report"
    assert main([*runs, other, "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert set(results["by_model"]) == {"m", "m2"} and "backends" not in results
    assert results["by_model"]["m2"]["backends"]["full"]["pass@1"] == 1.0
    assert results["by_model"]["m"]["backends"]["full"]["pass@1"] == pytest.approx(2 / 3)
    assert (out / "m-chart.png").exists() and (out / "m2-chart.png").exists()


def test_iterative_curves_are_means_per_turn():
    rows = [{"backend": "full", "iterative": {"turns": {"ia": [1.0, 1.0, 0.0],
                                                        "ca": [1.0, 1.0, 0.5],
                                                        "ifr": [None, 0.0, 0.5]}}},
            {"backend": "full", "iterative": {"turns": {"ia": [1.0, None],
                                                        "ca": [1.0, 0.5],
                                                        "ifr": [None, 0.5]}}}]
    assert turn_means(rows) == {"full": {"ia": [1.0, 1.0, 0.0], "ca": [1.0, 0.75, 0.5],
                                         "ifr": [None, 0.25, 0.5]}}


def test_iterative_runs_get_their_curves(tmp_path):
    row = {"source": "t1", "backend": "full", "kind": "iterative", "error": None,
           "iterative": {"ia": [1.0, 0.0], "ca": [1.0, 0.5], "ifr": [0.0, 0.5],
                         "turns": {"ia": [1.0, 0.0], "ca": [1.0, 0.5], "ifr": [None, 0.5]}}}
    run = write_run(tmp_path / "it", [row])
    assert main([run]) == 0
    assert (Path(run) / "report" / "iterative.png").read_bytes()[:8] == PNG


def test_a_folder_without_pairs_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(MergeError, match="no finished pairs"):
        merge([str(tmp_path / "empty")])
    assert main([str(tmp_path / "nothing-here")]) == 2
    assert "no such run folder" in capsys.readouterr().err.replace("\n", "")
    assert merged_summary(merge([write_run(tmp_path / "x", [pair(
        "s", "full", {"a": True}, {"a": 1.0}, 1.0, 10, 0.0, "single-hop", 40)])]))["pairs"] == 1


def test_report_needs_no_model_and_no_ray(tmp_path, runs):
    from tests.memory.test_imports import LLM_STACK, imported

    modules = imported(tmp_path, "replay", "report", *runs, "--out", str(tmp_path / "r"))
    assert "matplotlib" in modules and "fsspec" in modules
    assert not modules.intersection((*LLM_STACK, "ray", "lancedb"))
