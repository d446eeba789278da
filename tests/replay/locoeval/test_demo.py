"""`engram replay demo`: the bundled benchmark end to end."""

from __future__ import annotations

import json

from replay.cli.command import main
from replay.locoeval import DEMO
from replay.locoeval.outline import load_outlines
from tests.replay.workers import demo_reply

OUTLINES = load_outlines(DEMO / "outlines")[:2]


def test_demo_with_the_scripted_model_on_two_outlines(tmp_path, script):
    script.default = demo_reply
    script.count_prompt = True
    out = tmp_path / "demo"
    code = main(["demo", "--mock-user", "template", "--judge", "embed", "--limit", "2",
                 "--backends", "full,empty,rag,oracle", "--model", "scripted/t",
                 "--out", str(out), "--max-tokens", "128"])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    backends = results["backends"]
    assert set(backends) == {"full", "empty", "rag", "oracle"}
    assert results["pairs"] == 8
    for name, row in backends.items():
        assert row["pairs"] == 2 and row["errors"] == 0, name
        assert row["pass@1"] == 1.0, name  # the original code passes its real tests
        assert row["recall"] is not None and row["context_tokens"] > 0
    # distractors point at real code (LoCoEval 3.1.2), which top-10 retrieval may show
    assert backends["oracle"]["recall"] == 1.0
    assert backends["oracle"]["stale"] == min(row["stale"] for row in backends.values())
    assert backends["full"]["recall"] == 1.0 and backends["full"]["stale"] > 0
    assert backends["full"]["compression"] == 1.0
    # compression = full's tokens / the backend's (higher = less context)
    assert backends["empty"]["compression"] > backends["rag"]["compression"] > 1.0
    assert backends["empty"]["recall"] < 0.3  # the answers are not in the agent's copy
    assert backends["empty"]["normalized_pass@1"] is None  # oracle == empty: undefined
    names = sorted(p.name for p in (out / "conversations").iterdir())
    assert len(names) == 8 and all(n.endswith(".jsonl") for n in names)
    pairs = (out / "pairs.jsonl").read_text().splitlines()
    assert len(pairs) == 8
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
