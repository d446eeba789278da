from __future__ import annotations

import pytest

from memory.backends.base import BackendEnv
from memory.backends.mask import MaskBackend, mask_text
from memory.llm.client import LLM, LLMConfig
from memory.types import Turn

CODE_TURN = """Here is the fix for app/db.py:

```python
def connect(url, timeout=5):
    return open_connection(url, timeout)


class Pool:
    pass
```

It keeps the timeout."""

OUTPUT_TURN = """I ran the tests:

```console
$ pytest -q
F.
FAILED tests/test_db.py::test_connect - AssertionError
```

and then this happened:
Traceback (most recent call last):
  File "app/db.py", line 3, in connect
    raise ValueError("bad url")
ValueError: bad url

What now?"""


def backend(embedder, keep=2):
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/test")), embedder=embedder,
                     options={"mask_keep": keep})
    return MaskBackend(env)


def test_code_blocks_become_placeholders_naming_what_was_there():
    text, found = mask_text(CODE_TURN)
    assert "def connect" not in text and "return open_connection" not in text
    assert "[python code block omitted: 6 lines; defines connect, Pool]" in text
    assert text.startswith("Here is the fix for app/db.py:\n\n")
    assert text.endswith("\n\nIt keeps the timeout.")
    assert [m.kind for m in found] == ["code"]


def test_tool_outputs_and_tracebacks_become_placeholders():
    text, found = mask_text(OUTPUT_TURN)
    assert [m.kind for m in found] == ["output", "output"]
    assert "[console output omitted: 3 lines; last line: FAILED tests/test_db.py::" in text
    assert "[traceback omitted: ValueError: bad url]" in text
    assert 'File "app/db.py"' not in text and "$ pytest" not in text
    assert text.startswith("I ran the tests:") and text.endswith("\n\nWhat now?")


def test_prose_is_untouched():
    prose = "Rename connect to open_connection.\nKeep the `timeout` argument."
    assert mask_text(prose) == (prose, [])


async def test_only_turns_older_than_the_last_n_are_masked(embedder, script):
    mask = backend(embedder, keep=2)
    texts = [(CODE_TURN, OUTPUT_TURN), ("plain question", CODE_TURN), (CODE_TURN, "ok"),
             (OUTPUT_TURN, CODE_TURN)]
    for i, (user, assistant) in enumerate(texts):
        await mask.observe(Turn(i, user, assistant))
    pack = await mask.context("next?", budget=100_000)
    history = pack.of_kind("history")
    assert [s.source for s in history][::2] == ["turn:0", "turn:1", "turn:2", "turn:3"]
    shown = [s.text for s in history]
    # turns 0 and 1 (older than the last 2) masked; turns 2 and 3 verbatim
    assert "def connect" not in shown[0] and "Traceback" not in shown[1]
    assert shown[2] == "plain question"
    assert "def connect" not in shown[3]
    assert shown[4:] == [CODE_TURN, "ok", OUTPUT_TURN, CODE_TURN]
    masked_tokens = sum(s.tokens for s in history[:4])
    assert masked_tokens < sum(mask.env.count(t) for t in (CODE_TURN, OUTPUT_TURN,
                                                            "plain question", CODE_TURN))


async def test_catch_up_and_context_leave_state_consistent(embedder, script):
    one, many = backend(embedder), backend(embedder)
    turns = [Turn(i, CODE_TURN, f"answer {i}") for i in range(5)]
    for t in turns:
        await one.observe(t)
    await many.observe_many(turns)
    assert one.state_digest() == many.state_digest()
    before = one.state_digest()
    await one.context("q", budget=10)
    assert one.state_digest() == before



def agentic(i: int, outputs: list[str]) -> Turn:
    calls = [{"function": "read_file", "args": {"path": f"f{i}_{k}.py", "start": 1, "end": 0},
              "ok": True, "result": out} for k, out in enumerate(outputs)]
    return Turn(i, f"question {i}", f"answer {i}", meta={"tools": {"calls": calls}})


async def test_tool_outputs_past_the_observation_window_are_masked_and_recorded(embedder):
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/test")), embedder=embedder,
                     options={"mask_observations": 2})
    mask = MaskBackend(env)
    await mask.observe(agentic(0, ["zero-a\nlast of zero-a", "zero-b " + "word " * 200]))
    assert mask.drain_records() == []  # two outputs, two shown whole
    await mask.observe(agentic(1, ["one-a " + "word " * 200]))
    [record] = mask.drain_records()
    assert record["op"] == "MASK" and record["id"] == "turn:0:read_file"
    assert record["text"].startswith('read_file({"path": "f0_0.py"')
    assert "-> [output of read_file omitted: 2 lines" in record["text"]
    assert mask.masked_at == 1 and mask.last_masked == [  # what the inspector shows
        {"turn": 0, "call": 'read_file({"path": "f0_0.py", "start": 1, "end": 0})',
         "chars": len("zero-a\nlast of zero-a"),
         "text": record["text"].split(" -> ", 1)[1]}]
    pack = await mask.context("next", budget=10_000)
    trails = [s.text for s in pack.of_kind("history") if s.text.startswith("Tool calls")]
    assert "last line: last of zero-a]" in trails[0] and "zero-b" in trails[0]
    assert "one-a" in trails[1]
    before = mask.state_digest()
    room = sum(s.tokens for group in mask.view(0) for s in group)
    assert sum(s.tokens for group in mask.view() for s in group) > room
    tight = await mask.context("next", budget=room)  # fewer outputs whole, not fewer turns
    assert mask.state_digest() == before
    assert {s.source for s in tight.of_kind("history")} == {"turn:0", "turn:1"}
    trails = [s.text for s in tight.of_kind("history") if s.text.startswith("Tool calls")]
    assert [t.count("[output of read_file omitted") for t in trails] == [2, 1]

@pytest.mark.slow
async def test_real_embedded_model_conversation_is_masked(make_agent):
    """A conversation with local/smollm2: once a turn with code leaves the window, the
    model's next context shows the placeholder, not the code, and the answers go on."""
    from memory.backends import registry

    agent = make_agent("full", model="local/smollm2", max_answer_tokens=24)
    agent.env.options["mask_keep"] = 1
    agent.backend = registry.create("mask", agent.env)
    for query in [CODE_TURN, "Should connect log the url?", "And what about Pool?"]:
        assert (await agent.ask(query)).ok
    pack = await agent.context("Summarise the fix.")
    history = [s.text for s in pack.of_kind("history")]
    assert "[python code block omitted: 6 lines; defines connect, Pool]" in history[0]
    assert not any("return open_connection" in text for text in history[:2])
    assert history[-2] == "And what about Pool?"  # the last turn verbatim
