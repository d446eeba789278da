"""Steering: pins put into every context, forgets and edits of memories, recorded and
replayed on resume and on catch-up (memory/turn/steering.py, Agent.pin/forget/edit)."""

from __future__ import annotations

import json

import pytest

from memory.backends import BackendEnv, registry
from memory.llm.client import LLM, LLMConfig
from memory.transcript import read_transcript
from memory.turn.steering import Steering, SteeringError, SteeringUnsupported, user_ops
from memory.types import ContextPack, Section, Turn


def steering_records(agent) -> list[dict]:
    return user_ops(read_transcript(agent.transcript.path).of_type("memory"))


def sources(pack: ContextPack, kind: str) -> list[str]:
    return [s.source for s in pack.of_kind(kind)]


async def test_a_pinned_turn_is_in_every_next_context(make_agent, script):
    agent = make_agent("empty")
    first = await agent.ask("connect timeout is 5 seconds, keep it")
    await agent.ask("render the form")
    assert sources(await agent.context("anything"), "history") == []
    agent.pin("history", "turn:0", (await _turn_pack(agent, first)))
    pack = await agent.context("how do I migrate?")
    assert sources(pack, "history") == ["turn:0", "turn:0"]
    assert all(s.pinned for s in pack.of_kind("history"))
    turn = await agent.ask("and the database?")
    assert {"kind": "history", "source": "turn:0", "tokens": pack.of_kind("history")[0].tokens,
            "pinned": True} in turn.context
    assert script.calls[-1][1]["content"] == "connect timeout is 5 seconds, keep it"
    assert agent.unpin("turn:0")
    assert sources(await agent.context("x"), "history") == []
    assert [(r["op"], r["id"], r["after"]) for r in steering_records(agent)] == [
        ("pin", "turn:0", 2), ("unpin", "turn:0", 3)]


async def _turn_pack(agent, turn: Turn) -> list[Section]:
    from memory.backends.base import turn_sections

    return turn_sections(turn, agent.llm.count_tokens)


def test_pins_stay_within_the_budget_dropping_unpinned_sections_first():
    steering = Steering()
    steering.pin("memory", "m1", [Section("memory", "m1", "- pinned fact", 30)])
    pack = ContextPack("q", [Section("history", "turn:0", "old", 40, role="user"),
                             Section("history", "turn:1", "new", 40, role="user"),
                             Section("repo", "a.py::f", "code", 50)])
    assert steering.apply(pack, budget=80) == []
    assert [s.source for s in pack.sections] == ["turn:1", "m1"]
    tight = ContextPack("q", [])
    assert steering.apply(tight, budget=10) == ["m1"]  # a pin larger than the budget
    assert tight.sections == []


async def test_forget_and_edit_change_the_next_context_and_are_recorded(make_agent, script):
    agent = make_agent("mem0")
    script.push("noted", json.dumps({"facts": ["Dates are stored in UTC."]}),
                json.dumps({"operations": [{"fact": 0, "op": "ADD", "memory": -1, "text": ""}]}))
    await agent.ask("Dates are stored in UTC.")
    script.push("ok", json.dumps({"facts": ["The CLI is called engram."]}),
                json.dumps({"operations": [{"fact": 0, "op": "ADD", "memory": -1, "text": ""}]}))
    await agent.ask("The CLI is called engram.")
    dates, cli = agent.backend.memory_items()
    assert dates.text == "Dates are stored in UTC."
    agent.pin("memory", cli.id, [Section("memory", cli.id, f"- {cli.text}", 8)])

    assert await agent.edit(dates.id, "Dates are stored in UTC, offsets kept.") == dates.text
    assert await agent.forget(cli.id) == cli.text
    pack = await agent.context("how are dates stored?")
    assert [s.text for s in pack.of_kind("memory")] == ["- Dates are stored in UTC, offsets kept."]
    assert not agent.steering.pinned(cli.id)  # a forgotten memory is no longer pinned
    records = steering_records(agent)
    assert [(r["op"], r["by"], r["backend"]) for r in records] == [
        ("pin", "user", "mem0"), ("edit", "user", "mem0"), ("forget", "user", "mem0")]
    assert records[1]["old"] == "Dates are stored in UTC."
    assert records[2]["text"] == "The CLI is called engram."
    with pytest.raises(SteeringError, match="no memory"):
        await agent.forget(cli.id)
    with pytest.raises(SteeringError, match="empty"):
        await agent.edit(dates.id, "  ")


@pytest.mark.parametrize("name", ["empty", "compact", "mask", "ldagent"])
async def test_backends_without_discrete_memories_say_so(make_agent, name):
    agent = make_agent(name)
    await agent.ask("hello there")
    with pytest.raises(SteeringUnsupported, match=f"{name} cannot forget"):
        await agent.forget("anything")
    with pytest.raises(SteeringUnsupported, match=f"{name} cannot edit"):
        await agent.edit("anything", "text")
    assert steering_records(agent) == []


@pytest.mark.parametrize("name", ["full", "rag"])
async def test_a_verbatim_backend_forgets_a_turn_but_cannot_edit_one(make_agent, name):
    """full and rag keep past turns verbatim (memory/backends/_verbatim.py): each turn is
    a memory, forgotten whole (rag's vector with it), never edited."""
    agent = make_agent(name)
    await agent.ask("first question")
    await agent.ask("second question")
    items = agent.backend.memory_items()
    assert [i.id for i in items] == ["turn:0", "turn:1"] and not items[0].editable
    assert await agent.forget("turn:0") == "first question"
    assert sources(await agent.context("first question"), "history") == ["turn:1", "turn:1"]
    if name == "rag":
        assert len(agent.backend._vectors) == 1
    with pytest.raises(KeyError):
        await agent.backend.forget("turn:0")
    with pytest.raises(SteeringUnsupported, match="verbatim"):
        await agent.edit("turn:1", "other")


async def test_steering_survives_resume(make_agent, script):
    agent = make_agent("full")
    for q in ["first question", "second question", "third question"]:
        await agent.ask(q)
    await agent.forget("turn:1")
    agent.pin("repo", "app/db.py::connect", [Section("repo", "app/db.py::connect", "code", 3)])
    records = read_transcript(agent.transcript.path)

    resumed = make_agent("full")
    turns = [Turn.from_record(r) for r in records.of_type("turn")]
    await resumed.resume(turns, user_ops(records.of_type("memory")))
    pack = await resumed.context("unrelated words")
    assert sources(pack, "history") == ["turn:0", "turn:0", "turn:2", "turn:2"]
    assert "app/db.py::connect" in sources(pack, "repo")
    assert resumed.steering.pinned("app/db.py::connect")


async def test_forgets_and_edits_are_replayed_after_their_turns_on_catch_up(make_agent):
    agent = make_agent("amem")  # the scripted default reply: notes kept without keywords
    await agent.ask("dates are UTC")
    await agent.ask("the CLI is engram")
    await agent.forget("n0")
    await agent.edit("n1", "The CLI is called engram.")
    await agent.ask("a third turn after the steering")
    await agent.switch("full")
    assert await agent.forget("turn:2") == "a third turn after the steering"
    await agent.switch("amem")
    notes = {m.id: m.text for m in agent.backend.memory_items()}
    assert notes == {"n1": "The CLI is called engram.",
                     "n2": "Developer: a third turn after the steering\n"
                           "Assistant: scripted answer"}
    await agent.switch("full")  # full's own forget comes back too
    assert "turn:2" not in sources(await agent.context("q"), "history")


async def test_mem0_forget_and_edit_persist_in_lancedb(tmp_path, embedder, script):
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                     data_dir=tmp_path / "home", session_id="s1")
    mem0 = registry.create("mem0", env)
    script.push(json.dumps({"facts": ["Dates are stored in UTC.", "Logs use logging."]}),
                json.dumps({"operations": [
                    {"fact": 0, "op": "ADD", "memory": -1, "text": ""},
                    {"fact": 1, "op": "ADD", "memory": -1, "text": ""}]}))
    await mem0.observe(Turn(0, "u", "a"))
    dates, logs = mem0.memory_items()
    before = mem0.state_digest()
    await mem0.forget(logs.id)
    await mem0.edit(dates.id, "Dates are stored in UTC with offsets.")
    assert mem0.state_digest() != before

    reopened = registry.create("mem0", env)  # a new process reads the same store
    assert [(m.id, m.text) for m in reopened.memory_items()] == [
        (dates.id, "Dates are stored in UTC with offsets.")]
    assert [e.op for e in reopened.memories.events(dates.id)] == ["ADD", "EDIT"]
    assert [e.op for e in reopened.memories.events(logs.id)] == ["ADD", "FORGET"]
    query = embedder.embed(["Dates are stored in UTC with offsets."])[0]
    [(found, score)] = reopened.memories.similar(query, 1)
    assert found.id == dates.id and score > 0.99  # re-embedded with the new text
    with pytest.raises(KeyError):
        await reopened.forget(logs.id)


async def test_codemem_blocks_can_be_forgotten_and_notes_edited(make_agent, script):
    agent = make_agent("codemem")
    script.push("```python\ndef open_db(url):\n    conn = connect(url, timeout=9)\n"
                "    migrate(conn, [])\n    return conn\n```")
    await agent.ask("write open_db: connect with a timeout, then migrate")
    items = agent.backend.memory_items()
    code = [m for m in items if not m.editable]
    [block] = [m for m in items if m.editable]
    assert code and block.id == "open_db#0"
    with pytest.raises(SteeringUnsupported, match="repository's code"):
        await agent.edit(code[0].id, "x")
    await agent.forget(code[0].id)
    await agent.edit("open_db#0", "open_db connects, then migrates.")
    items = {m.id: m.text for m in agent.backend.memory_items()}
    assert code[0].id not in items and items["open_db#0"] == "open_db connects, then migrates."
    await agent.forget("open_db#0")
    assert agent.backend.session.live() == []


def test_a_history_message_costs_its_chat_template_beside_its_text():
    """Ten one-message turns of 10 tokens are 100 tokens of text but 160 of messages: a
    budget of 100 keeps the newest six, not all ten (many short turns, as LoCoMo's, passed
    the window by their messages' role headers)."""
    from memory.turn.steering import MESSAGE_TOKENS, cost

    turns = [Section("history", f"turn:{n}", f"t{n}", 10, role="user") for n in range(10)]
    pack = ContextPack("q", list(turns))
    Steering().apply(pack, budget=100)
    assert cost(turns[0]) == 10 + MESSAGE_TOKENS
    assert [s.source for s in pack.sections] == [f"turn:{n}" for n in range(4, 10)]
    assert sum(cost(s) for s in pack.sections) <= 100
    assert cost(Section("memory", "m", "fact", 10)) == 10  # a block of the system message


@pytest.mark.slow
async def test_many_short_turns_fit_the_embedded_models_window(make_agent):
    """``full`` over 600 short turns on the embedded model: the prompt it renders, chat
    template and all, leaves the answer its tokens within the model's window (5,870 tokens
    with each message's template uncounted)."""
    from memory.llm.local_calls import count_messages

    agent = make_agent("full", model="local/smollm2", repo=False, max_answer_tokens=32)
    for n in range(600):
        await agent.commit(Turn(index=n, user=f'DATE: 8 May, 2023\nAna said, "turn {n}"',
                                assistant="", backend="full", model="local/smollm2"))
    pack = await agent.context("When did Ana say turn 3?")
    rendered = count_messages("local/smollm2", pack.to_messages())
    assert 0 < len(pack.of_kind("history")) < 1200  # the oldest were dropped
    assert rendered + 32 <= agent.llm.context_window()
