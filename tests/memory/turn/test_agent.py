from __future__ import annotations

import pytest

from memory.backends import registry
from memory.transcript import read_transcript


@pytest.mark.parametrize("name", registry.names())
async def test_uncommitted_query_leaves_state_unchanged(make_agent, name):
    agent = make_agent(name)
    for i in range(3):
        assert (await agent.ask(f"committed question {i} about migrate")).ok
    before = agent.backend.state_digest()
    turn = await agent.ask("a task query that must not be remembered", commit=False)
    assert turn.ok and turn.assistant == "scripted answer"
    assert agent.backend.state_digest() == before
    assert len(agent.turns) == 3
    recorded = read_transcript(agent.transcript.path).of_type("turn")
    assert [t["user"] for t in recorded] == [f"committed question {i} about migrate"
                                             for i in range(3)]


async def test_a_turn_is_streamed_recorded_and_observed(make_agent, script):
    agent = make_agent("full")
    script.push("first answer here")
    pieces: list[str] = []
    turn = await agent.ask("how do I connect?", on_token=pieces.append)
    assert "".join(pieces) == "first answer here" == turn.assistant
    assert turn.usage.get("answer").calls == 1
    assert turn.context[0]["kind"] == "system"
    assert any(c["kind"] == "repo" for c in turn.context)
    second = await agent.ask("and then?")
    assert second.index == 1
    messages = script.calls[-1]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "how do I connect?"
    record = read_transcript(agent.transcript.path).of_type("turn")[0]
    assert record["assistant"] == "first answer here"
    assert record["context"] == turn.context


async def test_switch_catches_the_new_backend_up(make_agent, script):
    agent = make_agent("full")
    for q in ["database migration steps?", "render the form", "connect timeout?"]:
        await agent.ask(q)
    steps: list[tuple[int, int]] = []
    backend = await agent.switch("rag", progress=lambda d, t: steps.append((d, t)))
    assert backend.name == "rag" and agent.backend is backend
    assert steps[-1] == (3, 3)
    reference = make_agent("rag")
    for turn in agent.turns:
        await reference.backend.observe(turn)
    assert backend.state_digest() == reference.backend.state_digest()
    pack = await agent.context("migration")
    assert pack.of_kind("history")
    switches = read_transcript(agent.transcript.path).of_type("switch")
    assert switches == [{"type": "switch", "from": "full", "to": "rag", "turn": 3}]


async def test_failed_memory_update_never_loses_the_turn(make_agent, script):
    agent = make_agent("full")

    async def broken(turn):
        raise RuntimeError("store offline")

    agent.backend.observe = broken
    turn = await agent.ask("remember this")
    assert turn.ok
    transcript = read_transcript(agent.transcript.path)
    assert [t["user"] for t in transcript.of_type("turn")] == ["remember this"]
    assert transcript.of_type("memory")[0]["op"] == "error"
    assert "store offline" in transcript.of_type("memory")[0]["text"]


async def test_no_api_key_in_the_transcript(make_agent, script, monkeypatch):
    key = "sk-proj-THISISASECRETKEY0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    agent = make_agent("full")
    script.push(f"your key {key} is set")
    await agent.ask(f"is {key} my key?")
    assert key not in agent.transcript.path.read_text()


LOOP = ("The price parsing logic is in the parse_price function of money.py. "
        "It turns the text into a Decimal rounded to cents. ")


async def test_an_answer_that_repeats_itself_is_stopped_kept_once_and_recorded(
        make_agent, script):
    agent = make_agent("full")
    script.push("Look in money.py. " + LOOP * 12)
    pieces: list[str] = []
    turn = await agent.ask("Where is the price parsing logic?", on_token=pieces.append)
    assert turn.ok and turn.error is None
    assert turn.assistant == ("Look in money.py. " + LOOP).rstrip()
    streamed = "".join(pieces)
    assert len(streamed) < len("Look in money.py. " + LOOP * 4)  # stopped at the third copy
    stop = turn.meta["stopped"]
    assert stop["reason"] == "repetition" and stop["times"] == 3
    assert turn.usage.get("answer").calls == 1  # what was streamed is counted
    record = read_transcript(agent.transcript.path).of_type("turn")[0]
    assert record["assistant"] == turn.assistant
    assert record["meta"]["stopped"]["reason"] == "repetition"
    follow = await agent.ask("and then?")  # the next answer streams as usual
    assert follow.assistant == "scripted answer" and "stopped" not in follow.meta


async def test_an_answer_ended_by_the_last_copy_of_a_loop_is_cut_too(make_agent, script):
    agent = make_agent("full")
    line = "- `PYMENUBAR` - a command-line tool that controls your Python script."
    script.push("\n".join(["Values:", line, "- other", line, "- other", line]))
    turn = await agent.ask("what values?")
    assert turn.assistant == f"Values:\n{line}\n- other"
    assert turn.meta["stopped"]["rule"] == "count"


async def test_the_stop_can_be_turned_off_and_spares_ordinary_answers(make_agent, script):
    import dataclasses

    agent = make_agent("full")
    answer = "Use parse_price.\n\n```python\n}\n}\n}\n```\n\n- one\n- two\n- three"
    script.push(answer)
    assert (await agent.ask("how?")).assistant == answer
    agent.config = dataclasses.replace(agent.config, stop_repetition=False)
    script.push(LOOP * 6)
    turn = await agent.ask("where?", on_token=lambda _: None)
    assert turn.assistant == LOOP * 6 and "stopped" not in turn.meta


async def test_each_tool_call_is_recorded_then_handed_to_the_watcher(make_agent, script):
    """The app's live call lines come from the Agent's one hook on the tool loop: every
    call (the repository tools' and a backend's alike) as recorded, in order; a watcher
    that fails never breaks the turn."""
    import json

    from memory.acting.tools.box import RepoTools
    from tests.asked import asked

    agent = make_agent("full")
    agent.tools = RepoTools(agent.repo.root)
    steps = [{"function": "grep", "pattern": "def connect", "glob": "*.py",
              "request_heartbeat": True},
             {"function": "read_file", "path": "app/db.py", "start": 1, "end": 0,
              "request_heartbeat": False}]

    def reply(messages):
        if asked(messages).step:
            return json.dumps({"call": steps.pop(0) if steps else {"function": "answer"}})
        return "it is in app/db.py"
    script.default = reply
    seen: list[dict] = []
    agent.watch_calls = seen.append
    assert (await agent.ask("where is connect?")).ok
    records = read_transcript(agent.transcript.path).of_type("tool")
    assert [c["function"] for c in seen] == ["grep", "read_file"]
    assert [{k: v for k, v in r.items() if k not in ("type", "turn", "backend")}
            for r in records] == seen

    def broken(call):
        raise RuntimeError("the view is gone")
    steps.extend([{"function": "read_file", "path": "app/db.py", "start": 1, "end": 0,
                   "request_heartbeat": False}])
    agent.watch_calls = broken
    turn = await agent.ask("and again?")
    assert turn.ok and turn.meta["tools"]["calls"][0]["function"] == "read_file"
