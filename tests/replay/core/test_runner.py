"""Replays end to end with the scripted model: outline tasks, iterative scoring, resume, CLI."""

from __future__ import annotations

import io
import json

import pytest

from memory.backends import registry
from replay.core.runner import Replay, ReplayConfig, ReplayError
from replay.core.sources import load_source
from replay.locoeval.benchmark import judging
from replay.locoeval.mockuser import TemplateUser
from replay.locoeval.outline import load_outline
from replay.locoeval.tasks import outline_tasks
from replay.sandbox.sandbox import mode as sandbox_mode
from tests.replay.conftest import perfect_reply
from tests.replay.core.test_sources import CODEIF_TASK


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
        agent = replay.agent(outline, name, prepared.index)
        for _, text in TemplateUser(outline).conversation()[:4]:
            await agent.ask(text)
        before = agent.backend.state_digest()
        await outline_tasks(agent, outline, judging(replay).embed, replay.outline_repo(outline),
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
    assert pairs[0]["sandbox"] == sandbox_mode() and sandbox_mode() in ("bwrap", "weak")
    # the report prints IA / CA / IFR per turn (CodeIF-Bench's), not only pooled
    from rich.console import Console

    from replay.reporting.report import summarize, table

    summary = summarize(pairs)
    turns = summary["iterative"]["full"]["by_turn"]
    assert [turns[t]["ca"] for t in "012"] == pytest.approx([1.0, 1.0, 2 / 3])
    assert turns["0"]["ifr"] is None  # nothing to forget at the first turn
    assert [turns[t]["ifr"] for t in "12"] == pytest.approx([0.0, 1 / 2])
    assert [turns[t]["passed"] for t in "012"] == [1, 1, 0]  # all tests so far
    console = Console(file=io.StringIO(), width=160)
    console.print(table(summary))
    rows = _turn_rows(console.file.getvalue(), "full")
    assert rows["0"][-3:] == ["1.00", "1.00", "-"]  # IA, CA, IFR
    assert rows["2"][-3:] == ["1.00", "0.67", "0.50"]
    assert rows["total"][-3:] == ["1.00", "0.89", "0.25"]


def _turn_rows(printed: str, backend: str) -> dict[str, list[str]]:
    """The cells of the per-turn table of ``backend`` in a printed report, by turn."""
    lines = printed.splitlines()
    start = next(n for n, line in enumerate(lines) if f"{backend} · iterative, by turn" in line)
    rows = {}
    for line in lines[start + 1:]:
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and (cells[0].isdigit() or cells[0] == "total"):
            rows[cells[0]] = cells[1:]
        if cells and cells[0] == "total":
            break
    return rows


BROKEN = "```python\ndef add(a, b):\n    return a - b\n```"


async def test_samples_give_pass_at_k_per_turn_by_the_unbiased_estimator(tmp_path, script,
                                                                         embedder):
    good = "```python\ndef add(a, b):\n    return a + b\n```"
    strict = ("```python\ndef add(a, b):\n    if a is None or b is None:\n"
              "        raise TypeError('None')\n    return a + b\n```")
    forgetful = "```python\ndef add(a, b):\n    return (a or 0) + (b or 0)\n```"
    # per turn: 3 samples drawn first (commit=False), then the committed answer
    script.push(good, BROKEN, BROKEN, good,  # turn 0: c = 2 of n = 4
                forgetful, forgetful, forgetful, strict,  # turn 1: c = 1 (None rejected)
                BROKEN, BROKEN, BROKEN, forgetful)  # turn 2: c = 0
    path = tmp_path / "codeif.jsonl"
    path.write_text(json.dumps(CODEIF_TASK) + "\n")
    replay = Replay(config(tmp_path, ["full"], samples=4), embedder=embedder)
    try:
        pairs = await replay.run(load_source(path))
    finally:
        replay.close()
    assert len(script.calls) == 12 and not script.queue
    it = pairs[0]["iterative"]
    assert it["samples"] == [[True, True, False, False], [True, False, False, False],
                             [False, False, False, False]]
    assert it["ca"] == pytest.approx([1.0, 1.0, 2 / 3])  # the committed answers' scores
    assert pairs[0]["samples"] == 4 and pairs[0]["temperature"] == 0.8
    assert [t.user for t in replay_turns(tmp_path)] == [s for s in _instructions()]
    from rich.console import Console

    from replay.reporting.report import summarize, table

    summary = summarize(pairs)["iterative"]["full"]
    assert summary["ks"] == [1, 4]
    by_turn = summary["by_turn"]
    # pass@k = 1 - C(n-c, k) / C(n, k), n = 4
    assert by_turn["0"]["pass@1"] == pytest.approx(1 - 2 / 4)  # c=2: 1 - C(2,1)/C(4,1)
    assert by_turn["0"]["pass@4"] == 1.0
    assert by_turn["1"]["pass@1"] == pytest.approx(1 / 4)  # c=1: 1 - C(3,1)/C(4,1)
    assert by_turn["1"]["pass@4"] == 1.0
    assert by_turn["2"]["pass@1"] == 0.0 and by_turn["2"]["pass@4"] == 0.0
    assert summary["total"]["pass@1"] == pytest.approx((1 / 2 + 1 / 4 + 0) / 3)
    assert summary["total"]["pass@4"] == pytest.approx(2 / 3)
    assert summary["total"]["answers"] == 12 and summary["total"]["passed"] == 3
    console = Console(file=io.StringIO(), width=160)
    console.print(table(summarize(pairs)))
    rows = _turn_rows(console.file.getvalue(), "full")
    assert rows["1"][:4] == ["4", "1", "0.25", "1.00"]  # answers, passed, pass@1, pass@4


def _instructions():
    return [CODEIF_TASK["prompt"], *(CODEIF_TASK["requirements"][c]["requirement"]
                                     for c in CODEIF_TASK["multi-turn"])]


def replay_turns(tmp_path):
    from memory.transcript import read_transcript

    return read_transcript(next((tmp_path / "run" / "conversations").glob("*.jsonl"))).turns


async def test_samples_give_an_unbiased_pass_at_1_for_generation(tmp_path, outline_file, script,
                                                               embedder):
    from tests.replay.conftest import ANSWERS

    drawn = {"with_tax": iter([ANSWERS["with_tax"], "no code", "no code"]),  # c = 1 of 3
             "total": iter([ANSWERS["total"], ANSWERS["total"], "no code"])}  # c = 2 of 3

    def reply(messages):
        last = messages[-1]["content"]
        if "Write the function with_tax" in last:
            return next(drawn["with_tax"])
        if "Write the method Cart.total" in last:
            return next(drawn["total"])
        return perfect_reply(messages)

    script.default = reply
    replay = Replay(config(tmp_path, ["full"], samples=3), embedder=embedder)
    try:
        pairs = await replay.run(load_source(outline_file))
    finally:
        replay.close()
    scores = pairs[0]["scores"]
    assert scores["passes"] == {"s1": [True, False, False], "s2": [True, True, False]}
    assert scores["passed"] == {"s1": True, "s2": True}  # the first answers
    from replay.reporting.report import summarize

    # pass@1 = c / n per task (1 - C(n-c, 1) / C(n, 1)), then the mean: (1/3 + 2/3) / 2
    assert summarize(pairs)["backends"]["full"]["pass@1"] == pytest.approx(0.5)


def test_samples_below_one_are_refused(tmp_path, capsys):
    from replay.cli.command import main

    with pytest.raises(SystemExit):
        main(["x.json", "--samples", "0"])
    assert "--samples: must be >= 1, not 0" in capsys.readouterr().err
    with pytest.raises(ReplayError, match="samples must be >= 1"):
        config(tmp_path, ["full"], samples=0)


async def test_a_weak_sandbox_is_recorded_and_reported(tmp_path, script, embedder, monkeypatch):
    from rich.console import Console

    from replay.reporting.report import summarize, table

    script.push("```python\ndef add(a, b):\n    return a + b\n```")
    path = tmp_path / "codeif.jsonl"
    path.write_text(json.dumps({**CODEIF_TASK, "multi-turn": [], "requirements": {}}) + "\n")
    monkeypatch.setenv("ENGRAM_SANDBOX", "weak")  # as where the kernel refuses namespaces
    sandbox_mode.cache_clear()
    try:
        replay = Replay(config(tmp_path, ["full"]), embedder=embedder)
        try:
            pairs = await replay.run(load_source(path))
        finally:
            replay.close()
    finally:
        sandbox_mode.cache_clear()
    assert pairs[0]["sandbox"] == "weak"
    summary = summarize(pairs)
    assert summary["sandbox"] == ["weak"]
    console = Console(file=io.StringIO(), width=140)
    console.print(table(summary))
    assert "sandbox: weak (WEAK: the kernel refused namespaces" in console.file.getvalue()


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
    assert results["backends"]["empty"]["compression"] > 1.0  # full / empty: less context
    assert results["backends"]["empty"]["pass@1"] == 1.0
    printed = capsys.readouterr().out
    assert "engram replay" in printed and "empty" in printed
    assert "judge accuracy on the outlines' truth/distractor pairs" in printed
    assert results["sandbox"] == [sandbox_mode()] and f"sandbox: {sandbox_mode()}" in printed
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


def test_a_session_recorded_without_its_repository_is_not_replayed_silently(
        tmp_path, shop_repo, script, capsys):
    from memory.transcript import TranscriptWriter
    from memory.types import Turn
    from tui.cli import main

    path = tmp_path / "old.jsonl"
    with TranscriptWriter(path) as writer:  # an app session from before the repo was recorded
        writer.write({"type": "session", "id": "old1", "repo": ""})
        writer.write(Turn(0, "Where is the tax rate?", "old answer").to_record())
    out = tmp_path / "run"
    args = ["replay", str(path), "--backends", "full", "--model", "scripted/t",
            "--out", str(out)]
    assert main(args) == 2
    printed = capsys.readouterr().err
    assert "session old1 does not record its repository" in printed and "--repo" in printed
    assert not (out / "pairs.jsonl").exists()
    assert main([*args, "--repo", str(shop_repo)]) == 0
    assert (out / "pairs.jsonl").exists()


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


# -- the bundled demo with the context-reading scripted model ---------------------------------
DEMO_BACKENDS = ["full", "empty", "rag", "oracle"]


def run_with_reader(outlines, backends, out, options=None, window=0):
    """``outlines`` x ``backends`` on the demo repository, answered by the context-reading
    scripted model (an assistant's long answers) within ``window`` tokens (0: unbounded,
    as LoCoEval's Full): the pairs, and that model."""
    import asyncio

    from memory.index.embed import get_embedder
    from replay.locoeval import DEMO
    from tests.conftest import SCRIPT, _register_scripted
    from tests.replay.reader import ContextReader

    _register_scripted()
    reader = ContextReader(outlines, DEMO / "inventory")
    SCRIPT.queue.clear()
    # streamed in pieces of 512 words (an answer of up to 1500 words in a few): the answer
    # and every score are the same in pieces of 64 (checked on the whole demo), and
    # litellm's per-piece work was a tenth of this run
    SCRIPT.default, SCRIPT.count_prompt, SCRIPT.piece_words = reader, True, 512
    replay = Replay(ReplayConfig(backends=backends, model="scripted/reader", out=out,
                                 repo=DEMO / "inventory", max_tokens=128, window=window,
                                 backend_options=dict(options or {})),
                    embedder=get_embedder())
    try:
        return asyncio.run(replay.run(outlines)), reader
    finally:
        replay.close()
        SCRIPT.default, SCRIPT.count_prompt, SCRIPT.piece_words = "scripted answer", False, 1


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """One demo outline of each (k, subset) cell x full, empty, rag, oracle; the model reads
    only its context."""
    from replay.locoeval import DEMO
    from replay.locoeval.outline import load_outlines
    from replay.reporting.report import summarize
    from tests.replay.conftest import one_per_cell

    outlines = one_per_cell(load_outlines(DEMO / "outlines"))
    assert len(outlines) == 8
    pairs, reader = run_with_reader(outlines, DEMO_BACKENDS, tmp_path_factory.mktemp("demo-reader"))
    return summarize(pairs), pairs, reader


def test_demo_orderings_hold_with_a_context_reading_model(demo_run):
    summary, pairs, _ = demo_run
    assert all(p["error"] is None for p in pairs)
    rows = summary["backends"]
    for key in ("recall", "pass@1"):
        assert rows["oracle"][key] >= rows["full"][key] >= rows["empty"][key], key
    assert rows["oracle"]["pass@1"] > rows["empty"]["pass@1"]  # normalization is defined
    assert rows["full"]["normalized_pass@1"] is not None
    assert rows["rag"]["normalized_pass@1"] is not None
    multi = summary["by_subset"]["multi-hop"]
    assert multi["rag"]["recall"] < multi["full"]["recall"]
    assert rows["oracle"]["stale"] == 0.0 and rows["full"]["stale"] > 0.0
    assert rows["full"]["compression"] == 1.0 and rows["oracle"]["compression"] > 1.0


def test_demo_judge_tells_truths_from_distractors(demo_run, capsys):
    summary, _, _ = demo_run
    check = summary["judge_check"]
    with capsys.disabled():
        print(f"\njudge accuracy on the demo's truth/distractor pairs: {check['accuracy']:.3f} "
              f"({check['correct']}/{check['checks']})")
    assert check["checks"] > 0 and check["accuracy"] >= 0.9


def test_demo_empty_cannot_see_the_truths(demo_run):
    """Nothing leaks from the repository: the target functions and their tests are gone
    from the agent's copy, so the empty backend finds (almost) no true item."""
    summary, _, reader = demo_run
    assert summary["backends"]["empty"]["recall"] < 0.2
    assert summary["backends"]["empty"]["pass@1"] == 0.0
    assert ("code" in {d for _, d in reader.decisions}) and ("stub" in {
        d for _, d in reader.decisions})


def test_replay_gives_each_backend_the_options(tmp_path, outline_file, script, embedder):
    config = ReplayConfig(backends=["compact"], model="scripted/t", out=tmp_path / "run",
                          backend_options={"compact_turns": 4})
    replay = Replay(config, embedder=embedder)
    try:
        outline = load_outline(outline_file)
        agent = replay.agent(outline, "compact", replay.prepare(outline).index)
        assert agent.backend.config.turns == 4
    finally:
        replay.close()


def test_structured_retries_and_skips_reach_pairs_results_and_report(tmp_path, script,
                                                                      capsys, monkeypatch):
    """mem0 on two iterative turns: malformed JSON once (retried, parsed), never-parsable
    JSON once (skipped). The skip is in the transcript after its turn, the pair's totals
    in pairs.jsonl and results.json, the skips in the printed report."""
    from memory.transcript import read_transcript
    from tests.memory.test_mem0 import extract, ops
    from tui.cli import main

    code = "```python\ndef f():\n    return 1\n```"
    script.push(code, "facts: tabs {", extract("Use tabs."), ops({"fact": 0, "op": "ADD"}),
                code, "no JSON here", "still none")
    path = tmp_path / "own.json"
    path.write_text(json.dumps({"tasks": [{"id": "x", "turns": [
        {"instruction": "write f, and use tabs", "tests": ["assert f() == 1"]},
        {"instruction": "keep f, spaces after commas", "tests": ["assert f() == 1"]}]}]}))
    out = tmp_path / "run"
    monkeypatch.setenv("COLUMNS", "400")  # the whole table, no header cut short
    assert main(["replay", str(path), "--backends", "mem0", "--model", "scripted/t",
                 "--out", str(out)]) == 0
    expected = {"calls": 3, "retries": 2, "lenient": 0, "failed": 1, "skipped": 1,
                "errors": 0}
    [pair] = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert pair["structured"] == expected
    assert pair["window"] == 8192  # the budgets' base: litellm knows no window for scripted/t
    results = json.loads((out / "results.json").read_text())
    assert results["runs"][0]["structured"] == expected
    assert results["backends"]["mem0"]["structured"] == expected
    assert results["backends"]["mem0"]["mem_skips"] == 1
    transcript = read_transcript(next((out / "conversations").glob("*.jsonl")))
    kinds = [(r.type, getattr(r, "op", "")) for r in transcript.records if r.type != "session"]
    assert kinds == [("turn", ""), ("memory", "ADD"), ("turn", ""), ("memory", "skipped")]
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if "mem skips" in line)
    row = next(line for line in printed.splitlines() if line.startswith("│ mem0"))
    column = [c.strip()[:9] for c in header.split("┃")].index("mem skips")
    assert [c.strip() for c in row.split("│")][column] == "1"


def test_cards_on_demo_outlines_reports_its_scorer_and_leads_rag(tmp_path, capsys):
    """Two demo outlines, the context-reading model: cards reaches more true items than
    rag with fewer stale ones, and the results and the report say which scorer ran."""
    from replay.locoeval import DEMO
    from replay.locoeval.outline import load_outlines
    from replay.reporting.report import summarize, table

    pairs, _ = run_with_reader(load_outlines(DEMO / "outlines")[1:3], ["rag", "cards"],
                               tmp_path / "run", {"cards_packing": "pre"})
    summary = summarize(pairs)
    rows = summary["backends"]
    assert rows["cards"]["recall"] > rows["rag"]["recall"]
    assert rows["cards"]["stale"] < rows["rag"]["stale"]
    assert summary["settings"]["cards"]["scorer"] == "proxy"
    assert summary["settings"]["cards"]["packing"] == "pre" and "rag" not in summary["settings"]
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(table(summary))
    assert "cards: scorer proxy, packing pre" in console.export_text()


def test_pairs_keep_their_memory_stores_in_a_shared_location(tmp_path, script):
    """--store-uri: the pair's LanceDB goes to the shared location every worker can
    reach, in a folder of its own per run, and holds what the backend stored."""
    from memory.backends._memstore import MemoryStore
    from memory.store import Store
    from tests.memory.test_mem0 import extract, ops
    from tui.cli import main

    code = "```python\ndef f():\n    return 1\n```"
    path = tmp_path / "own.json"
    path.write_text(json.dumps({"tasks": [{"id": "x", "turns": [
        {"instruction": "write f, and use tabs", "tests": ["assert f() == 1"]}]}]}))
    shared = tmp_path / "shared"
    for run in range(2):
        script.push(code, extract("Use tabs."), ops({"fact": 0, "op": "ADD"}))
        assert main(["replay", str(path), "--backends", "mem0", "--model", "scripted/t",
                     "--out", str(tmp_path / f"run{run}"), "--store-uri", str(shared)]) == 0
    stores = sorted(shared.iterdir())
    assert len(stores) == 2 and all(s.name.startswith("x__mem0-") for s in stores)
    for folder in stores:  # each run's own store, with the one memory of its pair
        memories = MemoryStore(Store(folder / "index.lance"), "mem0:x__mem0", 384)
        assert [m.text for m in memories.live()] == ["Use tabs."]
