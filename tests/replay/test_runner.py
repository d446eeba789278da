"""Replays end to end with the scripted model: outline tasks, iterative scoring, resume, CLI."""

from __future__ import annotations

import json

import pytest

from memory.backends import registry
from replay.mockuser import TemplateUser
from replay.outline import load_outline
from replay.runner import Replay, ReplayConfig, ReplayError
from replay.sources import load_source
from replay.tasks import outline_tasks
from tests.replay.conftest import perfect_reply
from tests.replay.test_sources import CODEIF_TASK


def config(tmp_path, backends, **kw):
    return ReplayConfig(backends=backends, model="scripted/t", out=tmp_path / "run",
                        max_tokens=128, **kw)


async def test_outline_replay_scores_every_backend(tmp_path, outline_file, script, embedder):
    script.default = perfect_reply
    replay = Replay(config(tmp_path, ["full", "empty", "rag", "oracle"]), embedder=embedder)
    try:
        pairs = await replay.run(load_source(outline_file))
    finally:
        replay.close()
    by = {p["backend"]: p for p in pairs}
    assert set(by) == {"full", "empty", "rag", "oracle"}
    for row in pairs:
        assert row["error"] is None and row["turns"] == 7
        s = row["scores"]
        assert s["passed"] == {"s1": True, "s2": True}  # real pytest on the stubbed copy
        assert s["topic_f1"] == 1.0 and s["extract_f1"] == {"s1": 1.0, "s2": 1.0}
    assert by["full"]["scores"]["recall"] == {"s1": 1.0, "s2": 1.0}
    assert by["full"]["scores"]["stale"]["s1"] == pytest.approx(1 / 4)  # 3 true + 1 stale
    assert by["oracle"]["scores"]["stale"] == {"s1": 0.0, "s2": 0.0}
    assert by["oracle"]["scores"]["recall"] == {"s1": 1.0, "s2": 1.0}
    assert by["empty"]["scores"]["recall"]["s1"] < 1.0
    files = sorted(p.name for p in (tmp_path / "run" / "conversations").iterdir())
    assert files == [f"shop-2__{b}.jsonl" for b in ("empty", "full", "oracle", "rag")]
    assert len((tmp_path / "run" / "pairs.jsonl").read_text().splitlines()) == 4


@pytest.mark.parametrize("name", registry.names())
async def test_task_queries_leave_every_backend_unchanged(tmp_path, outline_file, script,
                                                          embedder, name):
    script.default = perfect_reply
    replay = Replay(config(tmp_path, [name]), embedder=embedder)
    outline = load_outline(outline_file)
    try:
        prepared = replay.prepare(outline)
        agent = replay._agent(outline, name, prepared.index)
        for _, text in TemplateUser(outline).conversation()[:4]:
            await agent.ask(text)
        before = agent.backend.state_digest()
        await outline_tasks(agent, outline, replay.embed_judge, replay.outline_repo(outline),
                            replay.config.limits)
        assert agent.backend.state_digest() == before
        assert len(agent.turns) == 4
    finally:
        replay.close()


async def test_resume_skips_finished_pairs(tmp_path, outline_file, script, embedder):
    script.default = perfect_reply
    replay = Replay(config(tmp_path, ["empty"]), embedder=embedder)
    await replay.run(load_source(outline_file))
    replay.close()
    calls = len(script.calls)
    again = Replay(config(tmp_path, ["empty", "full"], resume=True), embedder=embedder)
    pairs = await again.run(load_source(outline_file))
    again.close()
    assert {p["backend"] for p in pairs} == {"empty", "full"}
    assert len(script.calls) - calls == 7 + 5  # only full ran: 7 turns + 5 task queries


async def test_iterative_source_gives_ia_ca_ifr(tmp_path, script, embedder):
    good = "```python\ndef add(a, b):\n    return a + b\n```"
    strict = ("```python\ndef add(a, b):\n    if a is None or b is None:\n"
              "        raise TypeError('None')\n    return a + b\n```")
    forgetful = "```python\ndef add(a, b):\n    return (a or 0) + (b or 0)\n```"
    script.push(good, strict, forgetful)
    path = tmp_path / "codeif.jsonl"
    path.write_text(json.dumps(CODEIF_TASK) + "\n")
    replay = Replay(config(tmp_path, ["full"]), embedder=embedder)
    try:
        pairs = await replay.run(load_source(path))
    finally:
        replay.close()
    it = pairs[0]["iterative"]
    assert it["ia"] == [1.0, 1.0, 1.0]  # each turn's own tests pass ("assert True" at turn 3)
    assert it["ca"] == pytest.approx([1.0, 1.0, 2 / 3])  # turn 3 fails the None test again
    assert it["ifr"] == pytest.approx([0.0, 0.0, 1 / 2])


def test_unknown_backend_is_refused(tmp_path, embedder):
    with pytest.raises(ReplayError, match="unknown backend"):
        Replay(config(tmp_path, ["full", "nosuch"]), embedder=embedder)


def test_cli_writes_results_and_prints_a_table(tmp_path, outline_file, script, capsys):
    from tui.cli import main

    script.default = perfect_reply
    script.count_prompt = True
    out = tmp_path / "cli-run"
    code = main(["replay", str(outline_file), "--backends", "full,empty", "--model",
                 "scripted/t", "--out", str(out), "--max-tokens", "128"])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert set(results["backends"]) == {"full", "empty"}
    assert results["backends"]["full"]["compression"] == 1.0
    assert 0 < results["backends"]["empty"]["compression"] < 1.0
    assert results["backends"]["empty"]["pass@1"] == 1.0
    printed = capsys.readouterr().out
    assert "engram replay" in printed and "empty" in printed
    assert main(["replay", str(tmp_path / "missing.json"), "--model", "scripted/t",
                 "--out", str(out)]) == 2


async def test_recorded_transcript_is_redriven_with_its_repository(tmp_path, shop_repo, script,
                                                                  embedder):
    from memory.transcript import TranscriptWriter, read_transcript
    from memory.types import Turn

    path = tmp_path / "session.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write({"type": "session", "id": "rec1", "repo": str(shop_repo)})
        for i, q in enumerate(["Where is the tax rate?", "Round to cents, please.",
                               "What does Cart.total do?"]):
            writer.write(Turn(i, q, "old answer").to_record())
    script.count_prompt = True
    replay = Replay(config(tmp_path, ["full", "rag"]), embedder=embedder)
    try:
        pairs = await replay.run(load_source(path))
    finally:
        replay.close()
    assert {(p["source"], p["backend"], p["turns"]) for p in pairs} == {
        ("rec1", "full", 3), ("rec1", "rag", 3)}
    redriven = read_transcript(tmp_path / "run" / "conversations" / "rec1__rag.jsonl")
    turns = redriven.of_type("turn")
    assert [t["user"] for t in turns] == ["Where is the tax rate?", "Round to cents, please.",
                                         "What does Cart.total do?"]
    assert any(c["kind"] == "repo" and "shop/" in c["source"] for c in turns[0]["context"])


@pytest.mark.slow
def test_one_outline_end_to_end_through_the_embedded_model(tmp_path, outline_file):
    from tui.cli import main

    out = tmp_path / "real"
    code = main(["replay", str(outline_file), "--backends", "rag", "--model", "local/smollm2",
                 "--out", str(out), "--max-tokens", "32", "--test-timeout", "30"])
    results = json.loads((out / "results.json").read_text())
    row = results["backends"]["rag"]
    assert code == 0 and row["errors"] == 0
    assert row["tokens"] > 0 and row["pass@1"] is not None and row["recall"] is not None
    from memory.transcript import read_transcript

    turns = read_transcript(out / "conversations" / "shop-2__rag.jsonl").of_type("turn")
    assert len(turns) == 7 and all(t["assistant"] for t in turns)
