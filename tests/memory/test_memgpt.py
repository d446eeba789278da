from __future__ import annotations

import asyncio
import json

import pytest

from memory.backends.base import BackendEnv
from memory.backends.memgpt.backend import MemGPTBackend, MemGPTConfig
from memory.backends.memgpt.tiers import PAGE_SIZE, CoreMemory, Functions, Message
from memory.llm.client import LLM, LLMConfig
from memory.transcript import read_transcript
from memory.types import Turn
from tests.asked import asked


def backend(embedder, tmp_path, **options) -> MemGPTBackend:
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/test", backoff=0.01)), embedder=embedder,
                     data_dir=tmp_path, session_id="t", options=options)
    return MemGPTBackend(env)


def call(function: str, heartbeat: bool = True, **args) -> str:
    body = {"function": function, **args}
    if function != "answer":
        body["request_heartbeat"] = heartbeat
    return json.dumps({"call": body})


def router(steps: list[str], summaries: list[str] | None = None, answer: str = "done"):
    """Replies by prompt: tool-loop steps in order (then "answer"), summaries, the answer."""
    steps, summaries = list(steps), list(summaries or [])

    def reply(messages):
        system = messages[0]["content"]
        if asked(messages).step:
            return steps.pop(0) if steps else call("answer")
        if system.startswith("You keep the recursive summary"):
            return json.dumps({"summary": summaries.pop(0)})
        return answer
    return reply


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


async def test_pressure_warning_past_the_warning_share(embedder, tmp_path, script):
    mg = backend(embedder, tmp_path)
    mg.config = MemGPTConfig(window=mg.main_tokens() + 1000)
    limit = mg.limit()
    await mg.observe(Turn(0, words(40, "a"), "ok"))
    assert not mg.warned and mg.main_tokens() < 0.75 * limit
    while mg.main_tokens() <= 0.75 * limit:
        await mg.observe(Turn(len(mg.recall) // 2, words(30, "c"), "ok"))
    assert mg.warned and mg.main_tokens() <= limit
    pack = await mg.context("next?", budget=10_000)
    assert "warning" in [s.source for s in pack.sections]
    assert "memory pressure" in pack.to_messages()[0]["content"].lower()
    assert [r["op"] for r in mg.drain_records()] == ["WARNING"]


async def test_overflow_evicts_half_the_queue_and_rewrites_the_summary(embedder, tmp_path,
                                                                      script):
    mg = backend(embedder, tmp_path)
    mg.config = MemGPTConfig(window=mg.main_tokens() + 300)
    script.default = router([], ["turns 0-1: parse_date returns UTC.",
                                 "parse_date returns UTC; connect has a timeout."])
    turn = 0
    while not mg.summary:
        await mg.observe(Turn(turn, f"parse_date must return UTC. {words(20, 'x')}", "ok"))
        turn += 1
    assert mg.summary == "turns 0-1: parse_date returns UTC."
    assert mg.evicted >= 3 and len(mg.recall) == 2 * turn  # recall keeps every message
    assert mg.queue[0].turn == mg.queue[1].turn  # whole turns evicted
    assert mg.main_tokens() <= mg.limit() and not mg.warned
    first = mg.evicted
    while mg.evicted == first:
        await mg.observe(Turn(turn, f"connect needs a timeout. {words(20, 'y')}", "ok"))
        turn += 1
    prompt = [c for c in script.calls if c[0]["content"].startswith("You keep")][-1]
    assert "Previous summary:\nturns 0-1: parse_date returns UTC." in prompt[-1]["content"]
    assert mg.summary == "parse_date returns UTC; connect has a timeout."
    pack = await mg.context("what about connect?", budget=10_000)
    assert pack.sections[2].source != "summary"  # core blocks first, then the summary
    assert any(s.source == "summary" and mg.summary in s.text for s in pack.sections)
    assert {s.source for s in pack.of_kind("history")} == {f"turn:{m.turn}" for m in mg.queue}
    ops = [r["op"] for r in mg.drain_records()]
    assert ops.count("SUMMARIZE") == 2


async def test_a_failed_summary_keeps_the_queue(embedder, tmp_path, script):
    mg = backend(embedder, tmp_path)
    mg.config = MemGPTConfig(window=mg.main_tokens() + 100)
    script.default = "not json"
    for i in range(4):
        await mg.observe(Turn(i, words(20, "z"), "ok"))
    assert mg.summary == "" and len(mg.queue) == 8
    assert "skipped" in [r["op"] for r in mg.drain_records()]


async def test_each_function_call_and_its_effect(make_agent, script):
    agent = make_agent("memgpt")
    script.default = router([
        call("core_memory_append", label="developer", content="Uses type hints."),
        call("core_memory_append", label="task", content="parse_date returns local time."),
        call("core_memory_replace", label="task", old_content="local time",
             new_content="UTC"),
        call("archival_memory_insert", content="connect() needs a 5 s timeout."),
        call("archival_memory_search", query="timeout for connect", page=0),
        call("conversation_search", query="parse_date", page=0, heartbeat=False),
    ], answer="parse_date returns UTC.")
    turn = await agent.ask("parse_date must return UTC.")
    assert turn.ok and turn.assistant == "parse_date returns UTC."
    calls = turn.meta["tools"]["calls"]
    assert [c["function"] for c in calls] == [
        "core_memory_append", "core_memory_append", "core_memory_replace",
        "archival_memory_insert", "archival_memory_search", "conversation_search"]
    assert all(c["ok"] for c in calls)
    assert "parse_date returns UTC." in calls[2]["result"]
    assert "connect() needs a 5 s timeout." in calls[4]["result"]  # the scratch insert
    assert calls[5]["result"] == "No past messages found."  # this turn is not in recall yet
    assert turn.usage.get("memory").calls == 6 and turn.usage.get("answer").calls == 1
    sources = [c["source"] for c in turn.context]
    assert [s for s in sources if s.startswith("call:")] == [
        f"call:{i}:{c['function']}" for i, c in enumerate(calls, 1)]
    answer_request = asked(script.calls[-1])
    assert not answer_request.step and answer_request.query == "parse_date must return UTC."
    assert "Function call archival_memory_search" in answer_request.calls
    mg = agent.backend
    assert mg.core.blocks == {"developer": "Uses type hints.",
                              "task": "parse_date returns UTC."}
    assert [m.text for m in mg.archival.live()] == ["connect() needs a 5 s timeout."]
    records = read_transcript(agent.transcript.path)
    assert [r["op"] for r in records.of_type("memory")] == ["APPEND", "APPEND", "REPLACE",
                                                            "INSERT"]
    assert records.of_type("turn")[0]["meta"]["tools"]["calls"][0]["args"] == {
        "label": "developer", "content": "Uses type hints."}
    script.default = router([call("conversation_search", query="PARSE_DATE", page=0,
                                  heartbeat=False)])
    turn = await agent.ask("what did I say?")
    assert "[turn 0, developer] parse_date must return UTC." in \
        turn.meta["tools"]["calls"][0]["result"]


async def test_edits_of_an_uncommitted_answer_leave_no_trace(make_agent, script):
    agent = make_agent("memgpt")
    script.default = router([call("core_memory_append", label="task", content="Secret plan."),
                             call("archival_memory_insert", content="Secret passage.")])
    before = agent.backend.state_digest()
    turn = await agent.ask("a task query", commit=False)
    assert len(turn.meta["tools"]["calls"]) == 2
    assert agent.backend.state_digest() == before
    assert agent.backend.core.blocks["task"] == "" and len(agent.backend.archival) == 0


async def test_a_failed_call_chains_a_step_and_the_chain_is_bounded(make_agent, script):
    agent = make_agent("memgpt")
    failing = call("core_memory_replace", heartbeat=False, label="task", old_content="absent",
                   new_content="x")
    script.default = router([failing, call("answer")])
    turn = await agent.ask("hello there")
    calls = turn.meta["tools"]["calls"]
    assert len(calls) == 1 and not calls[0]["ok"] and turn.meta["tools"]["steps"] == 2
    assert "not in block" in calls[0]["result"]
    script.default = router([call("conversation_search", query="hello", page=0)] * 20)
    turn = await agent.ask("and again")
    assert turn.meta["tools"]["steps"] == agent.config.max_tool_steps == 6
    assert len(turn.meta["tools"]["calls"]) == 6 and turn.assistant == "done"
    assert turn.usage.get("memory").calls == 6


async def test_a_step_that_never_parses_still_answers(make_agent, script):
    agent = make_agent("memgpt")
    turn = await agent.ask("plain question")
    assert turn.ok and turn.assistant == "scripted answer"
    assert turn.meta["tools"]["calls"] == [] and "step 1" in turn.meta["tools"]["error"]


def test_searches_are_paginated(embedder, tmp_path):
    mg = backend(embedder, tmp_path)
    recall = [Message(i, "developer", f"parse_date note {i}") for i in range(12)]
    box = Functions(CoreMemory(), recall, mg.archival, mg._embed, "parse_date", False)
    assert PAGE_SIZE == 5

    async def search(page: int) -> str:
        return (await box.call("conversation_search", {"query": "parse_date",
                                                       "page": page})).text
    first, last, past = (asyncio.run(search(p)) for p in (0, 2, 3))
    assert first.startswith("Showing 1-5 of 12 past messages (page 0 of 2):")
    assert "parse_date note 11" in first and "parse_date note 6" not in first  # newest first
    assert last.startswith("Showing 11-12 of 12") and "parse_date note 0" in last
    assert past.startswith("Page 3 is past the last page (2)")


def test_constrained_tools_offer_only_what_the_query_and_blocks_hold(embedder, tmp_path):
    mg = backend(embedder, tmp_path)
    core = CoreMemory()
    assert Functions(core, [], mg.archival, mg._embed, "Hi", True).tools() == []
    box = Functions(core, [], mg.archival, mg._embed, "timezone?", True)
    assert [t.name for t in box.tools()] == ["archival_memory_search", "conversation_search"]
    core.append("task", "parse_date returns UTC.")
    box = Functions(core, [], mg.archival, mg._embed, "connect must use a 5 s timeout.", True)
    tools = {t.name: t for t in box.tools()}
    assert tools["core_memory_append"].parameters["content"]["enum"] == [
        "connect must use a 5 s timeout."]
    assert tools["core_memory_replace"].parameters["old_content"]["enum"] == [
        "parse_date returns UTC."]
    assert "connect" in tools["conversation_search"].parameters["query"]["enum"]
    box = Functions(core, [], mg.archival, mg._embed, "parse_date returns UTC.", True)
    assert "core_memory_append" not in [t.name for t in box.tools()]  # already in a block


@pytest.mark.slow
async def test_real_embedded_model_manages_its_memory(make_agent):
    from memory.backends import registry

    agent = make_agent("full", model="local/smollm2", max_answer_tokens=24)
    agent.env.options["memgpt_window"] = 700
    agent.backend = registry.create("memgpt", agent.env)
    for query in ["I maintain app/dates.py and I always use type hints.",
                  "parse_date in app/dates.py must return UTC datetimes.",
                  "connect in app/db.py needs a timeout of 5 seconds.",
                  "Which timezone does parse_date return?"]:
        turn = await agent.ask(query)
        assert turn.ok
        print("steps:", turn.meta["tools"])
    records = read_transcript(agent.transcript.path).of_type("memory")
    print("memory ops:", [(r["op"], r["text"][:60]) for r in records])
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    applied = [r for r in records if r["op"] in ("APPEND", "REPLACE", "INSERT", "SUMMARIZE")]
    assert applied, records
