"""Agentic sessions: 20 turns, each reading long files through the repository tools
(a scripted model, a real repository in a tmp dir, the real Agent and transcript). For
``mask`` and ``compact`` every request stays within the window, and the transcript and
the turns hold what was masked or summarised."""

from __future__ import annotations

import json
import re

import pytest

from memory.agent import Agent, AgentConfig
from memory.backends import BackendEnv, registry
from memory.backends.compact import CALLS_PROMPT, HEADINGS
from memory.backends.compact import SUMMARY_PROMPT as COMPACT_PROMPT
from memory.llm import LLM, LLMConfig
from memory.toolloop import STEP_TOKENS
from memory.tools.box import RepoTools
from memory.transcript import TranscriptWriter, read_transcript

from ..conftest import make_repo

STEP = "Before you answer, you may call one of your"
TURNS = 20
MODULES = 6
ANSWER_TOKENS = 256


def module(n: int) -> str:
    return "".join(f"value_{n}_{i} = compute({i}, 'argument text that makes the line long')\n"
                   for i in range(1, 401))


def call(function: str, heartbeat: bool = True, **args) -> str:
    return json.dumps({"call": {"function": function, **args,
                                "request_heartbeat": heartbeat}})


class Model:
    """The scripted model of an agent: each turn reads two modules and greps, then
    answers; summaries and notes on request. Every request it gets is kept."""

    def __init__(self) -> None:
        self.steps: dict[int, int] = {}
        self.requests: list[tuple[str, list[dict]]] = []

    def plan(self, turn: int) -> list[str]:
        a, b = turn % MODULES, (turn + 1) % MODULES
        return [call("read_file", path=f"pkg/mod{a}.py", start=1, end=0),
                call("grep", pattern=f"value_{b}_{turn + 1} =", glob="*.py"),
                call("read_file", False, path=f"pkg/mod{b}.py", start=100, end=0)]

    def __call__(self, messages: list[dict]) -> str:
        system = messages[0]["content"]
        if system.startswith(COMPACT_PROMPT[:60]):
            self.requests.append(("summary", messages))
            return json.dumps({key: [f"read modules for {key}"] for key in HEADINGS})
        if system.startswith(CALLS_PROMPT[:60]):
            self.requests.append(("notes", messages))
            return json.dumps({"notes": "mod files set value_n_i = compute(i, ...)."})
        turn = int(re.match(r"turn (\d+):", messages[-1]["content"]).group(1))
        if STEP in system:
            self.requests.append(("step", messages))
            done = self.steps.get(turn, 0)
            self.steps[turn] = done + 1
            plan = self.plan(turn)
            return plan[done] if done < len(plan) else json.dumps(
                {"call": {"function": "answer"}})
        self.requests.append(("answer", messages))
        return f"In turn {turn}, value_{turn % MODULES}_1 is set on line 1 of the module."


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {f"pkg/mod{n}.py": module(n) for n in range(MODULES)})


async def session(backend: str, repo, tmp_path, embedder, script, **options) -> tuple:
    model = Model()
    script.default = model
    llm = LLM(LLMConfig(model="scripted/test", backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, data_dir=tmp_path / "home",
                     session_id="agentic", options=options)
    writer = TranscriptWriter(tmp_path / f"{backend}.jsonl")
    agent = Agent(registry.create(backend, env), llm, env, writer,
                  config=AgentConfig(max_answer_tokens=ANSWER_TOKENS, max_tool_steps=5))
    agent.tools = RepoTools(repo)
    for turn in range(TURNS):
        done = await agent.ask(f"turn {turn}: where is value_{turn % MODULES}_1 set?")
        assert done.ok, done.error
    writer.close()
    return agent, model, read_transcript(writer.path)


def within_the_window(agent: Agent, model: Model) -> None:
    window = agent.llm.context_window()
    replies = {"step": STEP_TOKENS, "answer": ANSWER_TOKENS, "summary": 512, "notes": 512}
    assert {kind for kind, _ in model.requests} >= {"step", "answer"}
    most: dict[str, int] = {}
    for kind, messages in model.requests:
        sent = agent.llm.count_messages(messages)
        assert sent + replies[kind] <= window, (kind, sent)
        most[kind] = max(most.get(kind, 0), sent)
    print(f"{agent.backend.name}: window {window}, most tokens sent per request kind: {most}, "
          f"{len(model.requests)} requests")


def tools_recorded(agent: Agent, transcript) -> None:
    calls = transcript.tool_calls
    assert len(calls) == 3 * TURNS
    assert [(c.turn, c.step, c.function) for c in calls[:3]] == [
        (0, 1, "read_file"), (0, 2, "grep"), (0, 3, "read_file")]
    assert all(c.ok for c in calls) and "value_0_1 = compute(1" in calls[0].result
    for turn in agent.turns:
        tools = turn.meta["tools"]
        assert [c["function"] for c in tools["calls"]] == ["read_file", "grep", "read_file"]
        assert tools["peak"] <= tools["limit"]


async def test_mask_keeps_a_long_agentic_session_within_the_window(repo, tmp_path, embedder,
                                                                  script):
    agent, model, transcript = await session("mask", repo, tmp_path, embedder, script,
                                             mask_observations=2)
    within_the_window(agent, model)
    tools_recorded(agent, transcript)
    within = [e for t in agent.turns for e in t.meta["tools"].get("dropped", [])]
    assert any(e["by"] == "mask" and e["action"] == "masked" and e["step"] == 1
               for e in within)  # three calls, two outputs whole: the first masked
    assert all(e["action"] in ("masked", "clipped", "dropped") for e in within)
    masked = [m for m in transcript.memories if m.op == "MASK"]
    assert len(masked) == 3 * TURNS - 2  # every output but the newest two left the window
    assert masked[0].id == "turn:0:read_file"
    assert "-> [output of read_file omitted" in masked[0].text
    last = agent.turns[-1].context
    assert any(c["source"] == "turn:18" for c in last)  # past turns still in view
    history = (await agent.context("turn 20: and now?")).of_kind("history")
    trails = [s.text for s in history if s.text.startswith("Tool calls of this turn")]
    assert trails and "[output of read_file omitted" in trails[0]


async def test_compact_keeps_a_long_agentic_session_within_the_window(repo, tmp_path,
                                                                     embedder, script):
    agent, model, transcript = await session("compact", repo, tmp_path, embedder, script)
    within_the_window(agent, model)
    tools_recorded(agent, transcript)
    within = [e for t in agent.turns for e in t.meta["tools"].get("dropped", [])]
    folded = [e for e in within if e["action"] == "summarised"]
    assert folded and all(e["by"] == "compact" for e in folded)
    assert any("mod files set value_n_i" in e["text"] for e in folded)
    summaries = [m for m in transcript.memories if m.op == "SUMMARIZE"]
    assert summaries, "twenty turns of long outputs never compacted"
    dropped = summaries[0].data["dropped"]
    assert dropped[0]["turn"] == 1 and "3 tool calls" in dropped[0]["text"]
    assert 'read_file({"path": "pkg/mod1.py"' in dropped[0]["text"]
    prompt = next(m for kind, m in model.requests if kind == "summary")[-1]["content"]
    assert "Tool calls:" in prompt and "value_1_1 = compute(1" in prompt
