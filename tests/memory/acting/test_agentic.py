"""Agentic sessions: 20 turns, each reading long files (about 10,000 characters a read),
running the tests (a real pytest run's long output) and grepping through the repository
tools (a scripted model, a real repository in a tmp dir, the real Agent, token counter
and transcript). For ``mask`` and ``compact`` every request of every turn (each step of
the tool loop, the answer, the summaries) stays within the window, measured with the
agent's own token counter, and the transcript and the turns hold what was masked or
summarised. The test run's output is a real pytest run's, recorded once per module and
given back by the run tool's jail (running the jail 40 times would take minutes).

The figures: ``pytest tests/memory/acting/test_agentic.py -s -n0`` prints, per backend, the
window and the most tokens any request of each turn sent."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory.acting.jail.tree import command_env
from memory.acting.toolloop import STEP_TOKENS
from memory.acting.tools.box import RepoTools
from memory.acting.tools.consent import ConsentPolicy
from memory.acting.tools.run import CommandResult, Limits, RunTool
from memory.backends import BackendEnv, registry
from memory.backends.cards.build import FACT_PROMPT
from memory.backends.compact import CALLS_PROMPT, HEADINGS
from memory.backends.compact import SUMMARY_PROMPT as COMPACT_PROMPT
from memory.llm.client import LLM, LLMConfig
from memory.transcript import TranscriptWriter, read_transcript
from memory.turn.agent import Agent, AgentConfig
from tests.asked import asked

from ...conftest import make_repo

TURNS = 20
MODULES = 6
ANSWER_TOKENS = 256


def module(n: int) -> str:
    return "".join(f"value_{n}_{i} = compute({i}, 'argument text that makes the line long')\n"
                   for i in range(1, 401))


FAILING = "".join(
    f"def test_value_{i}():\n    assert {{'value': {i}, 'text': 'a long value to compare "
    f"with another one'}} == {{'value': {i + 1}, 'text': 'a long value to compare with "
    f"another one'}}\n\n\n" for i in range(40))


@pytest.fixture(scope="module")
def test_run(tmp_path_factory) -> CommandResult:
    """A real pytest run of forty failing tests (its output: tens of thousands of
    characters), recorded once."""
    root = tmp_path_factory.mktemp("suite")
    (root / "test_values.py").write_text(FAILING)
    argv = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    # in the environment the jail gives a command: nothing of the caller's (no COLUMNS,
    # CI or PYTEST_ADDOPTS changing what pytest prints)
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300,
                          env=command_env(root, root))
    assert "40 failed" in done.stdout, done.stdout[-2000:]
    return CommandResult(("python", "-m", "pytest", "-q"), done.returncode, False,
                         done.stdout, done.stderr, 1.0, "recorded")


class Recorded:
    """The run tool's jail in these tests: every command gets the recorded run."""

    def __init__(self, result: CommandResult) -> None:
        self.result = result

    def available(self) -> str | None:
        return None

    def run(self, root: Path, argv: list[str], limits: Limits) -> CommandResult:
        return self.result


def call(function: str, heartbeat: bool = True, **args) -> str:
    return json.dumps({"call": {"function": function, **args,
                                "request_heartbeat": heartbeat}})


CALLS = 4  # per turn


class Model:
    """The scripted model of an agent: each turn reads a module, runs the tests, greps
    and reads another module, then answers; summaries and notes on request. Every
    request it gets is kept with the turn it came in."""

    def __init__(self) -> None:
        self.steps: dict[int, int] = {}
        self.turn = 0
        self.requests: list[tuple[str, list[dict]]] = []
        self.turns: list[int] = []  # the turn of each request

    def plan(self, turn: int) -> list[str]:
        a, b = turn % MODULES, (turn + 1) % MODULES
        return [call("read_file", path=f"pkg/mod{a}.py", start=1, end=0),
                call("run", command="tests"),
                call("grep", pattern=f"value_{b}_{turn + 1} =", glob="*.py"),
                call("read_file", False, path=f"pkg/mod{b}.py", start=100, end=0)]

    def __call__(self, messages: list[dict]) -> str:
        system = messages[0]["content"]
        if system.startswith(COMPACT_PROMPT[:60]):
            self.kept("summary", messages)
            return json.dumps({key: [f"read modules for {key}"] for key in HEADINGS})
        if system.startswith(FACT_PROMPT[:60]):  # cards' fact extraction
            self.kept("facts", messages)
            return json.dumps({"facts": []})
        if system.startswith(CALLS_PROMPT[:60]):
            self.kept("notes", messages)
            return json.dumps({"notes": "mod files set value_n_i = compute(i, ...); "
                                        "40 tests fail on value dicts."})
        turn = self.turn = int(re.match(r"turn (\d+):", messages[-1]["content"]).group(1))
        if asked(messages).step:
            self.kept("step", messages)
            done = self.steps.get(turn, 0)
            self.steps[turn] = done + 1
            plan = self.plan(turn)
            return plan[done] if done < len(plan) else json.dumps(
                {"call": {"function": "answer"}})
        self.kept("answer", messages)
        return f"In turn {turn}, value_{turn % MODULES}_1 is set on line 1 of the module."

    def kept(self, kind: str, messages: list[dict]) -> None:
        self.requests.append((kind, messages))
        self.turns.append(self.turn)


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {f"pkg/mod{n}.py": module(n) for n in range(MODULES)})


async def session(backend: str, repo, tmp_path, embedder, script, test_run, window: int,
                  **options) -> tuple:
    model = Model()
    script.default = model
    llm = LLM(LLMConfig(model="scripted/test", backoff=0.01))
    if window != llm.context_window():  # the embedded model's default window, say
        llm.context_window = lambda: window  # type: ignore[method-assign]
    env = BackendEnv(llm=llm, embedder=embedder, data_dir=tmp_path / "home",
                     session_id="agentic", options=options)
    writer = TranscriptWriter(tmp_path / f"{backend}.jsonl")
    agent = Agent(registry.create(backend, env), llm, env, writer,
                  config=AgentConfig(max_answer_tokens=ANSWER_TOKENS, max_tool_steps=5))
    agent.tools = RepoTools(repo, runner=RunTool(repo, ConsentPolicy.preallowed(),
                                                 Recorded(test_run)))
    for turn in range(TURNS):
        done = await agent.ask(f"turn {turn}: where is value_{turn % MODULES}_1 set?")
        assert done.ok, done.error
    writer.close()
    return agent, model, read_transcript(writer.path)


def within_the_window(agent: Agent, model: Model) -> None:
    """Every request, with the reply it may take, within the window (the agent's own
    token counter); prints the most tokens sent per turn and per request kind."""
    window = agent.llm.context_window()
    replies = {"step": STEP_TOKENS, "answer": ANSWER_TOKENS, "summary": 512, "notes": 512,
               "facts": 400}
    assert {kind for kind, _ in model.requests} >= {"step", "answer"}
    most: dict[str, int] = {}
    per_turn = [0] * TURNS
    for (kind, messages), turn in zip(model.requests, model.turns, strict=True):
        sent = agent.llm.count_messages(messages)
        assert sent + replies[kind] <= window, (turn, kind, sent)
        most[kind] = max(most.get(kind, 0), sent)
        per_turn[turn] = max(per_turn[turn], sent)
    outputs = [len(c["result"]) for t in agent.turns for c in t.meta["tools"]["calls"]]
    print(f"\n{agent.backend.name}: window {window}; {len(model.requests)} requests; "
          f"tool outputs {min(outputs)}-{max(outputs)} chars, {sum(outputs)} in all; "
          f"most tokens sent per request kind {most}; per turn (0-{TURNS - 1}) {per_turn}")


def tools_recorded(agent: Agent, transcript) -> None:
    calls = transcript.tool_calls
    assert len(calls) == CALLS * TURNS
    assert [(c.turn, c.step, c.function) for c in calls[:CALLS]] == [
        (0, 1, "read_file"), (0, 2, "run"), (0, 3, "grep"), (0, 4, "read_file")]
    assert "value_0_1 = compute(1" in calls[0].result
    assert [c.ok for c in calls[:CALLS]] == [True, False, True, True]  # the tests fail
    for turn in agent.turns:
        tools = turn.meta["tools"]
        assert [c["function"] for c in tools["calls"]] == ["read_file", "run", "grep",
                                                           "read_file"]
        assert tools["peak"] <= tools["limit"]
        read, ran = (len(c["result"]) for c in tools["calls"][:2])
        assert read >= 8000 and ran >= 5000  # long outputs
        assert "40 failed" in tools["calls"][1]["result"]


WINDOWS = pytest.mark.parametrize("window", [8192, 4096])  # an API model's, SmolLM2's


@WINDOWS
async def test_mask_keeps_a_long_agentic_session_within_the_window(repo, tmp_path, embedder,
                                                                  script, test_run, window):
    agent, model, transcript = await session("mask", repo, tmp_path, embedder, script,
                                             test_run, window, mask_observations=2)
    within_the_window(agent, model)
    tools_recorded(agent, transcript)
    within = [e for t in agent.turns for e in t.meta["tools"].get("dropped", [])]
    # four calls, two outputs whole: the first masked by mask, or, in a window too small
    # for two of them, clipped and then masked by the window's fit before mask had to
    assert any(e["by"] == ("mask" if window == 8192 else "window") and e["step"] == 1
               and e["action"] == "masked" for e in within)
    assert any(e["by"] == "mask" and e["action"] == "masked" for e in within)
    assert all(e["action"] in ("masked", "clipped", "dropped") for e in within)
    masked = [m for m in transcript.memories if m.op == "MASK"]
    assert len(masked) == CALLS * TURNS - 2  # every output but the newest two left it
    assert masked[0].id == "turn:0:read_file"
    assert "-> [output of read_file omitted" in masked[0].text
    last = agent.turns[-1].context
    assert any(c["source"] == "turn:18" for c in last)  # past turns still in view
    history = (await agent.context("turn 20: and now?")).of_kind("history")
    trails = [s.text for s in history if s.text.startswith("Tool calls of this turn")]
    assert trails and "[output of read_file omitted" in trails[0]


@WINDOWS
async def test_compact_keeps_a_long_agentic_session_within_the_window(repo, tmp_path,
                                                                     embedder, script,
                                                                     test_run, window):
    agent, model, transcript = await session("compact", repo, tmp_path, embedder, script,
                                             test_run, window)
    within_the_window(agent, model)
    tools_recorded(agent, transcript)
    within = [e for t in agent.turns for e in t.meta["tools"].get("dropped", [])]
    folded = [e for e in within if e["action"] == "summarised"]
    assert folded and all(e["by"] == "compact" for e in folded)
    assert any("mod files set value_n_i" in e["text"] for e in folded)
    summaries = [m for m in transcript.memories if m.op == "SUMMARIZE"]
    assert summaries, "twenty turns of long outputs never compacted"
    dropped = summaries[0].data["dropped"]
    assert dropped[0]["turn"] == 1 and f"{CALLS} tool calls" in dropped[0]["text"]
    assert 'read_file({"path": "pkg/mod1.py"' in dropped[0]["text"]
    prompt = next(m for kind, m in model.requests if kind == "summary")[-1]["content"]
    assert "Tool calls:" in prompt and "value_1_1 = compute(1" in prompt


@pytest.mark.parametrize("backend", ["full", "cards"])
async def test_backends_without_a_condenser_stay_within_a_small_window(
        backend, repo, tmp_path, embedder, script, test_run):
    """No condenser: the window's own fit keeps every step within 4,096 tokens. cards
    also reads the twenty test runs: the forty failures are current once each, revised
    by the next run that fails them again."""
    agent, model, transcript = await session(backend, repo, tmp_path, embedder, script,
                                             test_run, 4096)
    within_the_window(agent, model)
    tools_recorded(agent, transcript)
    if backend == "cards":
        graph = agent.backend.graph
        failing = [n for n in graph.current() if n.type == "failure"]
        assert len(failing) == 40 and all(n.turn == TURNS - 1 for n in failing)
        [run] = [n for n in graph.current() if n.type == "tests"]
        assert run.content.startswith(f"tests `python -m pytest -q` (the whole suite) at "
                                      f"turn {TURNS - 1}: 40 failed.")
        assert graph.nodes["fail:0:run2:0"].superseded_by == "fail:1:run2:0"
