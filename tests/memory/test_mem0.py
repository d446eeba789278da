from __future__ import annotations

import json

import pytest

from memory.backends import BackendEnv, registry
from memory.llm.client import LLM, LLMConfig
from memory.transcript import read_transcript
from memory.types import Turn


def extract(*facts):
    return json.dumps({"facts": list(facts)})


def ops(*operations):
    """The update answer; ``memory`` and ``text`` default as the schema asks (-1, "")."""
    return json.dumps({"operations": [{"memory": -1, "text": "", **op} for op in operations]})


@pytest.fixture
def mem0_env(tmp_path, embedder, script):
    def build(session="s1", repo=None, **options):
        return BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                          repo=repo, data_dir=tmp_path / "home", session_id=session,
                          options=options)
    return build


def turn(i, user="u", assistant="a"):
    return Turn(i, user, assistant)


async def test_add_update_delete_leave_the_right_state_and_history(mem0_env, script):
    mem0 = registry.create("mem0", mem0_env())
    script.push(extract("Dates are stored in UTC."), ops({"fact": 0, "op": "ADD"}))
    await mem0.observe(turn(0))
    [memory] = mem0.memories.live()
    assert memory.text == "Dates are stored in UTC."

    script.push(extract("Dates are stored in UTC with an offset."),
                ops({"fact": 0, "op": "UPDATE", "memory": 0,
                     "text": "Dates are stored in UTC, with the offset kept."}))
    await mem0.observe(turn(1))
    assert [m.text for m in mem0.memories.live()] == [
        "Dates are stored in UTC, with the offset kept."]
    # the update prompt showed the stored memory as number 0, never its uuid
    update_prompt = script.calls[-1][-1]["content"]
    assert "0: Dates are stored in UTC." in update_prompt and memory.id not in update_prompt

    script.push(extract("Dates are no longer stored in UTC."),
                ops({"fact": 0, "op": "DELETE", "memory": 0}))
    await mem0.observe(turn(2))
    assert mem0.memories.live() == []
    history = mem0.memories.events(memory.id)
    assert [(e.op, e.turn) for e in history] == [("ADD", 0), ("UPDATE", 1), ("DELETE", 2)]
    assert history[1].old == "Dates are stored in UTC."
    assert history[2].old == "Dates are stored in UTC, with the offset kept."


async def test_noop_changes_nothing(mem0_env, script):
    mem0 = registry.create("mem0", mem0_env())
    script.push(extract("Use tabs."), ops({"fact": 0, "op": "ADD"}))
    await mem0.observe(turn(0))
    before = mem0.state_digest()
    script.push(extract("The developer uses tabs."), ops({"fact": 0, "op": "NOOP"}))
    await mem0.observe(turn(1))
    assert mem0.state_digest() == before
    assert len(mem0.memories.events()) == 1


async def test_invented_ids_are_rejected(mem0_env, script):
    mem0 = registry.create("mem0", mem0_env())
    script.push(extract("Use tabs."), ops({"fact": 0, "op": "ADD"}))
    await mem0.observe(turn(0))
    before = mem0.state_digest()
    script.push(extract("Use spaces."),
                ops({"fact": 0, "op": "UPDATE", "memory": 7, "text": "Use spaces."}))
    await mem0.observe(turn(1))
    assert mem0.state_digest() == before
    assert mem0.last.rejected == ["invented memory id 7"]
    # a uuid where the schema wants a number: one corrective retry, then skipped
    script.push(extract("Use spaces."),
                ops({"fact": 0, "op": "DELETE", "memory": "3f2a9c"}))
    await mem0.observe(turn(2))
    assert mem0.state_digest() == before and "after a retry" in mem0.last.skipped
    retry = script.calls[-1][-1]["content"]
    assert "not usable" in retry and "memory" in retry


async def test_trivially_broken_json_is_repaired(mem0_env, script):
    mem0 = registry.create("mem0", mem0_env())
    script.push("Here you go:\n```json\n{'facts': ['Use tabs.',],}\n```",
                "{'operations': [{'fact': 0, 'op': 'ADD', 'memory': -1, 'text': ''},]}")
    await mem0.observe(turn(0))
    assert [m.text for m in mem0.memories.live()] == ["Use tabs."]
    stats = mem0.env.llm.stats
    assert (stats.calls, stats.parsed, stats.lenient, stats.retries) == (2, 2, 2, 0)


async def test_malformed_json_loses_no_turn(make_agent, script):
    agent = make_agent("mem0")
    script.push("the answer", "I think the facts are: tabs, maybe {")
    result = await agent.ask("please use tabs")
    assert result.ok
    transcript = read_transcript(agent.transcript.path)
    assert [t["user"] for t in transcript.of_type("turn")] == ["please use tabs"]
    [record] = transcript.of_type("memory")
    assert record["op"] == "skipped" and "no JSON" in record["text"]
    assert agent.backend.memories.live() == []


async def test_memory_events_reach_the_transcript_and_usage(make_agent, script):
    agent = make_agent("mem0")
    script.push("ok", extract("Use tabs."), ops({"fact": 0, "op": "ADD"}))
    await agent.ask("please use tabs")
    [record] = read_transcript(agent.transcript.path).of_type("memory")
    assert record["op"] == "ADD" and record["text"] == "Use tabs."
    assert agent.llm.ledger.get("memory").calls == 2
    assert agent.llm.ledger.get("answer").calls == 1


async def test_query_shows_top_memories_and_repo_functions(make_agent, script):
    agent = make_agent("mem0")
    script.push("ok", extract("Migrations run in a single transaction.", "Use tabs."),
                ops({"fact": 0, "op": "ADD"}, {"fact": 1, "op": "ADD"}))
    await agent.ask("how do migrations work?")
    before = agent.backend.state_digest()
    pack = await agent.context("run the migrations")
    first = pack.of_kind("memory")[0]
    assert first.text == "- Migrations run in a single transaction."
    assert "app/db.py::migrate" in [s.source for s in pack.of_kind("repo")]
    await agent.ask("a task query", commit=False)
    assert agent.backend.state_digest() == before


async def test_memories_persist_across_a_restart(mem0_env, script):
    first = registry.create("mem0", mem0_env())
    script.push(extract("Use tabs."), ops({"fact": 0, "op": "ADD"}))
    await first.observe(turn(0))
    again = registry.create("mem0", mem0_env())
    assert [m.text for m in again.memories.live()] == ["Use tabs."]
    assert again.state_digest() == first.state_digest()
    other_session = registry.create("mem0", mem0_env(session="s2"))
    assert other_session.memories.live() == []
    shared = registry.create("mem0", mem0_env(session="s3", shared_memory=True))
    script.push(extract("Use tabs."), ops({"fact": 0, "op": "ADD"}))
    await shared.observe(turn(0))
    shared_again = registry.create("mem0", mem0_env(session="s4", shared_memory=True))
    assert [m.text for m in shared_again.memories.live()] == ["Use tabs."]


async def test_mem0r_locations_resolve_or_are_refused(make_agent, script):
    agent = make_agent("mem0r")
    facts = [
        {"text": "Exact location.", "locations": ["app/forms.py::Form.validate_input"]},
        {"text": "Partial name.", "locations": ["validate_input"]},
        {"text": "Wrong directory.", "locations": ["lib/forms.py::validate_input"]},
        {"text": "Escaping path.", "locations": ["../../etc/passwd", "app/forms.py\x00::Form",
                                                 "validate\x00input"]},
        {"text": "Unknown name.", "locations": ["frobnicate_everything"]},
    ]
    script.push("ok", extract(*facts), ops(*({"fact": i, "op": "ADD"} for i in range(5))))
    await agent.ask("remember these")
    stored = {m.text: m.locations for m in agent.backend.memories.live()}
    assert stored["Exact location."] == ["app/forms.py::Form.validate_input"]
    assert stored["Escaping path."] == []  # refused, never stored
    target = "app/forms.py::Form.validate_input"
    for location in ("app/forms.py::Form.validate_input", "validate_input",
                     "lib/forms.py::validate_input"):
        assert agent.backend.resolve(location)[0] == target
    assert agent.backend.resolve("../../etc/passwd") is None
    assert agent.backend.resolve("app/forms.py\x00::Form") is None
    pack = await agent.backend.context("validate input locations", budget=100_000)
    repo = pack.of_kind("repo")
    assert [s.source for s in repo] == [target]  # linked code, shown once
    assert "raise ValueError" in repo[0].text
    texts = "\n".join(s.text for s in pack.of_kind("memory"))
    assert "frobnicate_everything (unresolved)" in texts
    assert "lib/forms.py::validate_input -> app/forms.py::Form.validate_input" in texts


SIX_TURNS = [
    "Store all dates in UTC in app/db.py.",
    "validate_input in app/forms.py must reject empty strings.",
    "The connect function must use a timeout of 10 seconds.",
    "render_form must escape HTML in field values.",
    "Actually, store dates in local time, not UTC.",
    "The migrate function must stop at the first failing step.",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mem0", "mem0r"])
async def test_real_embedded_model_stores_memories(make_agent, name):
    """SmolLM2 under the schema grammar: every memory update parses and memories land."""
    agent = make_agent(name, model="local/smollm2", max_answer_tokens=24)
    for query in SIX_TURNS:
        result = await agent.ask(query)
        assert result.ok, result.error
    records = read_transcript(agent.transcript.path).of_type("memory")
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    stats = agent.llm.stats
    assert stats.grammar == stats.calls >= 12 and stats.parsed == stats.calls
    live = agent.backend.memories.live()
    assert len(live) >= 3, [m.text for m in live]
    if name == "mem0r":
        located = [loc for m in live for loc in m.locations
                   if agent.backend.resolve(loc) is not None]
        assert located, [(m.text, m.locations) for m in live]
    pack = await agent.context("dates")
    assert pack.of_kind("memory")


def test_memories_command_lists_memories_with_history(demo_repo, tmp_path, script,
                                                       monkeypatch, capsys):
    import sys

    from tui.cli import main

    script.push("answer one", extract("Use tabs."), ops({"fact": 0, "op": "ADD"}),
                "answer two", extract("Use spaces now."),
                ops({"fact": 0, "op": "UPDATE", "memory": 0, "text": "Use spaces."}))
    monkeypatch.setattr(sys, "stdin", iter(["use tabs\n", "no, spaces\n"]))
    data = str(tmp_path / "data")
    assert main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "mem0", "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["memories", "--repo", str(demo_repo), "--data-dir", data]) == 0
    out = capsys.readouterr().out
    assert ": 1 memories" in out and "Use spaces." in out
    assert "ADD" in out and "UPDATE" in out and "Use tabs. -> Use spaces." in out
    assert main(["memories", "--repo", str(demo_repo), "--backend", "full",
                 "--data-dir", data]) == 2


def test_in_process_similarity_ranks_like_lancedb(tmp_path, monkeypatch):
    import numpy as np

    from memory.backends import _memstore
    from memory.store import Store

    rng = np.random.default_rng(7)
    store = _memstore.MemoryStore(Store(tmp_path / "db"), "mem0:s", dim=16)
    for n in range(40):
        vector = rng.normal(size=16).astype(np.float32)
        store.add(f"memory {n}", [], vector / np.linalg.norm(vector), turn=n)
    query = rng.normal(size=16).astype(np.float32)
    query /= np.linalg.norm(query)
    mirrored = store.similar(query, 10)
    monkeypatch.setattr(_memstore, "MIRROR_SEARCH_MAX", 0)
    searched = store.similar(query, 10)
    assert [m.id for m, _ in mirrored] == [m.id for m, _ in searched]
    assert np.allclose([s for _, s in mirrored], [s for _, s in searched], atol=1e-5)


async def test_retries_and_skips_are_counted_in_the_turn_meta(make_agent, script):
    """Malformed JSON once (the corrective retry parses) and never-parsable JSON (the
    update is skipped): both counted in the turn's meta."""
    agent = make_agent("mem0")
    script.push("ok", "facts: tabs {", extract("Use tabs."), ops({"fact": 0, "op": "ADD"}),
                "ok", "no JSON here", "still none")
    await agent.ask("please use tabs")
    await agent.ask("and spaces after commas")
    first, second = agent.turns
    assert first.meta["structured"] == {"calls": 2, "retries": 1, "lenient": 0, "failed": 0,
                                        "skipped": 0, "errors": 0}
    assert second.meta["structured"] == {"calls": 1, "retries": 1, "lenient": 0, "failed": 1,
                                         "skipped": 1, "errors": 0}
    transcript = read_transcript(agent.transcript.path)
    # a turn is recorded before its memory update (a crash then loses no turn): its
    # record counts the answer's structured calls (none here), the memory records
    # that follow it hold what the update did
    assert [(r.get("meta") or {}).get("structured") for r in transcript.of_type("turn")] == [
        None, None]
    kinds = [(r.type, getattr(r, "op", "")) for r in transcript.records]
    assert kinds == [("turn", ""), ("memory", "ADD"), ("turn", ""), ("memory", "skipped")]
    assert [m.text for m in agent.backend.memories.live()] == ["Use tabs."]


@pytest.mark.slow
def test_real_headless_chat_with_mem0r_stores_memories(demo_repo, tmp_path, monkeypatch,
                                                        capsys):
    """The acceptance path a user takes: `engram chat --headless --backend mem0r` with the
    embedded model, six lines on stdin: >= 3 memories stored, no update skipped."""
    import sys

    from tui.cli import main

    monkeypatch.setattr(sys, "stdin", iter(f"{q}\n" for q in SIX_TURNS))
    data = tmp_path / "data"
    assert main(["chat", "--headless", "--repo", str(demo_repo), "--model", "local/smollm2",
                 "--backend", "mem0r", "--data-dir", str(data), "--max-tokens", "24"]) == 0
    [path] = data.glob("repos/*/sessions/*.jsonl")
    transcript = read_transcript(path)
    turns = transcript.of_type("turn")
    assert len(turns) == 6
    records = transcript.of_type("memory")
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    ops = [r["op"] for r in records]
    assert ops.count("ADD") - ops.count("DELETE") >= 3, records  # memories left stored
