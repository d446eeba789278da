from __future__ import annotations

import json

import pytest

from memory.backends.base import BackendEnv
from memory.backends.compact import HEADINGS, CompactBackend, CompactConfig, summary_schema
from memory.llm.client import LLM, LLMConfig
from memory.transcript import read_transcript
from memory.types import Turn


def backend(embedder, **config):
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/test", backoff=0.01)), embedder=embedder)
    return CompactBackend(env, CompactConfig(**config))


def summary(**lines: list[str]) -> str:
    """A structured summary as the model answers it (the headings left out are empty)."""
    return json.dumps({key: lines.get(key, []) for key in HEADINGS})


def turn(i: int) -> Turn:
    return Turn(i, f"question {i} about parse_date in utils/dates.py", f"answer {i}")


def sources(pack, kind="history"):
    return [s.source for s in pack.of_kind(kind)][::2] if kind == "history" else \
        [s.source for s in pack.of_kind(kind)]


async def test_turn_trigger_keeps_head_and_tail_and_summarises_the_middle(embedder, script):
    compact = backend(embedder, turns=6, keep_first=1)
    for i in range(6):
        await compact.observe(turn(i))
    assert compact.compactions == 0 and script.calls == []
    script.push(summary(requirements=["parse_date returns UTC (utils/dates.py::parse_date)"]))
    await compact.observe(turn(6))  # 7 verbatim turns > 6: compact
    assert compact.compactions == 1
    # OpenHands' tail after a condensation: max_size // 2 - keep_first - 1 = 1
    assert [t.index for t in compact.head] == [0]
    assert [t.index for t in compact.tail] == [6]
    assert compact.summarized == [1, 2, 3, 4, 5]
    prompt = script.calls[0][-1]["content"]
    assert "[turn 1]" in prompt and "[turn 5]" in prompt
    assert "[turn 0]" not in prompt and "[turn 6]" not in prompt
    pack = await compact.context("next?", budget=10_000)
    assert sources(pack) == ["turn:0", "turn:6"]
    memory = pack.of_kind("memory")
    assert [s.source for s in memory] == ["summary"]
    assert "UTC" in memory[0].text and "turns 1-5" in memory[0].text
    records = compact.drain_records()
    assert [r["op"] for r in records] == ["SUMMARIZE"]


async def test_tool_calls_are_shown_folded_and_what_was_dropped_recorded(embedder, script):
    compact = backend(embedder, turns=3, keep_first=1)
    for i in range(4):
        calls = [{"function": "grep", "args": {"pattern": f"p{i}", "glob": ""}, "ok": True,
                  "result": f"app/x.py:{i}:match {i}\n" + "x" * 3000}]
        if i == 3:
            script.push(summary(code_written=["grep found p1 and p2 in app/x.py"]))
        await compact.observe(Turn(i, f"question {i}", f"answer {i}",
                                   meta={"tools": {"calls": calls}}))
    prompt = script.calls[0][-1]["content"]
    assert 'Tool calls:\nFunction call grep({"pattern": "p1", "glob": ""}) returned:' in prompt
    [record] = compact.drain_records()
    assert record["op"] == "SUMMARIZE"
    assert [d["turn"] for d in record["dropped"]] == [1, 2]
    assert "1 tool calls (3019 characters of output): grep(" in record["dropped"][0]["text"]
    assert compact.last_compaction == {  # what the inspector shows for the last turn
        "after": 3, "summary": record["text"], "dropped": record["dropped"], "turns": [1, 2]}
    pack = await compact.context("next?", budget=10_000)
    trail = [s for s in pack.of_kind("history") if s.text.startswith("Tool calls")]
    assert [s.source for s in trail] == ["turn:0", "turn:3"]
    assert trail[1].text.endswith(" [...]") and len(trail[1].text) < 1700

async def test_the_summary_is_recursive(embedder, script):
    compact = backend(embedder, turns=4, keep_first=1)
    script.push(summary(decisions=["first summary"]), summary(decisions=["second summary"]))
    for i in range(10):
        await compact.observe(turn(i))
    assert compact.compactions == 2  # at turns 4 and 7 (more than 4 verbatim turns)
    second = script.calls[1][-1]["content"]
    assert "Previous summary:\nDecisions:\n- first summary" in second
    assert compact.summary == "Decisions:\n- second summary"
    assert compact.summarized == [1, 2, 3, 4, 5, 6]


async def test_share_trigger_uses_the_window(embedder, script, monkeypatch):
    compact = backend(embedder, share=0.8)
    monkeypatch.setattr(compact.env.llm, "context_window", lambda: 1500)
    script.push(*[summary(requirements=["short summary"])] * 3)
    long = "word " * 300
    for i in range(4):
        await compact.observe(Turn(i, f"{i} {long}", "ok"))
    assert compact.compactions >= 1
    assert compact.history_tokens() <= 1200
    assert compact.head[0].index == 0 and compact.tail[-1].index == 3
    for messages in script.calls:  # each summary request and its reply within the window
        assert compact.env.llm.count_messages(messages) + 512 <= 1500


async def test_a_summary_request_that_cannot_fit_the_window_is_skipped(embedder, script,
                                                                      monkeypatch):
    """Not even the instructions fit a 100-token window: nothing is sent, the turns stay
    verbatim, and the skip is recorded."""
    compact = backend(embedder, share=0.8)
    monkeypatch.setattr(compact.env.llm, "context_window", lambda: 100)
    for i in range(4):
        await compact.observe(Turn(i, f"{i} " + "word " * 30, "ok"))
    assert compact.compactions == 0 and script.calls == []
    assert len(compact.tail) == 3
    skipped = [r for r in compact.drain_records() if r["op"] == "skipped"]
    assert skipped and "do not fit the window even cut short" in skipped[0]["text"]


async def test_forced_compaction_passes_the_guidance(embedder, script):
    compact = backend(embedder)
    for i in range(4):
        await compact.observe(turn(i))
    before = compact.state_digest()
    script.push(summary(decisions=["summary that keeps the API decisions"]))
    assert await compact.compact("keep the API decisions")
    assert "keep the API decisions" in script.calls[-1][-1]["content"]
    assert compact.summarized == [1, 2] and [t.index for t in compact.tail] == [3]
    assert compact.state_digest() != before
    assert not await compact.compact()  # nothing left between head and the newest turn


async def test_a_failed_summary_keeps_every_turn(embedder, script, monkeypatch):
    compact = backend(embedder, turns=2)
    script.push(summary())  # an empty summary is no summary
    for i in range(3):
        await compact.observe(turn(i))
    assert compact.compactions == 0 and compact.summary == ""
    pack = await compact.context("q", budget=10_000)
    assert sources(pack) == ["turn:0", "turn:1", "turn:2"]
    assert [r["op"] for r in compact.drain_records()] == ["skipped"]


async def test_the_summary_is_structured_and_rendered_under_headings(embedder, script):
    compact = backend(embedder, turns=2)
    script.push(summary(requirements=["parse_date returns UTC"],
                        open_errors=["test_dates fails on DST"],
                        code_written=["utils/dates.py::parse_date rewritten"]))
    for i in range(3):
        await compact.observe(turn(i))
    assert compact.summary == ("Requirements:\n- parse_date returns UTC\n"
                               "Open errors:\n- test_dates fails on DST\n"
                               "Code written:\n- utils/dates.py::parse_date rewritten")


def test_under_constrained_decoding_lines_are_chosen_not_written():
    schema = summary_schema(["parse_date returns UTC.", "Use the logging module."])
    lines = schema["properties"]["requirements"]
    assert lines["items"]["enum"] == ["parse_date returns UTC.", "Use the logging module."]
    assert lines["maxItems"] == 2 and set(schema["required"]) == set(HEADINGS)
    assert "maxLength" not in json.dumps(schema)


async def test_context_leaves_state_unchanged(embedder, script):
    compact = backend(embedder, turns=2)
    for i in range(5):
        await compact.observe(turn(i))
    before = compact.state_digest()
    await compact.context("anything", budget=50)
    assert compact.state_digest() == before


@pytest.mark.slow
async def test_real_embedded_model_compacts(make_agent):
    from memory.backends import registry

    agent = make_agent("full", model="local/smollm2", max_answer_tokens=24)
    agent.env.options["compact_turns"] = 2
    agent.backend = registry.create("compact", agent.env)
    for query in ["parse_date in app/dates.py must return UTC datetimes.",
                  "Also log with the logging module, never print.",
                  "Rename connect to open_connection in app/db.py.",
                  "What did we decide about dates?"]:
        assert (await agent.ask(query)).ok
    records = read_transcript(agent.transcript.path).of_type("memory")
    print("memory ops:", [(r["op"], r["text"][:60]) for r in records])
    applied = [r for r in records if r["op"] == "SUMMARIZE"]
    assert applied, records
    assert agent.backend.summary
    pack = await agent.context("dates")
    assert pack.of_kind("memory")


@pytest.mark.parametrize("name", ["compact", "mask", "amem", "ldagent", "memgpt"])
async def test_a_switch_catches_up_as_if_observed_turn_by_turn(make_agent, script, name):
    agent = make_agent("full")
    agent.env.options.update(compact_turns=2, ldagent_session_turns=2, memgpt_window=900)
    for q in ["parse_date must return UTC.", "connect needs a timeout.",
              "render_form escapes HTML.", "migrate stops at the first failure."]:
        assert (await agent.ask(q)).ok
    backend = await agent.switch(name)
    reference = agent.backends.create(name, agent.env)
    for turn in agent.turns:
        await reference.observe(turn)
    assert backend.state_digest() == reference.state_digest()
