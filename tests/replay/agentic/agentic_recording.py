"""Agentic sessions recorded for the replay tests: the real Agent with the real repository
tools and edits (``memory.acting.workbench.Workbench``, as ``engram chat --apply``: the run tool in
the real jail, each answer's edit applied and committed) and a scripted model, on a git
repository made in a tmp dir; and the scripted model that replays them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.acting.tools.consent import ConsentPolicy
from memory.acting.workbench import Workbench
from memory.backends import BackendEnv, registry
from memory.llm.client import LLM, LLMConfig
from memory.transcript import TranscriptWriter, new_session_id
from memory.turn.agent import Agent, AgentConfig
from tests.asked import asked
from tests.conftest import git, make_repo

BUGGY = "def double(x):\n    return x * 3\n"
FIXED = "def double(x):\n    return x * 2\n"
REPO = {"calc.py": BUGGY,
        "test_calc.py": "from calc import double\n\n\ndef test_double():\n"
                        "    assert double(2) == 4\n",
        "README.md": "# calc\n\nDoubles numbers.\n"}
FIX = ("double multiplies by 3; it must multiply by 2.\n\n@@@ EDIT calc.py\n@@@ SEARCH\n"
       "    return x * 3\n@@@ REPLACE\n    return x * 2\n@@@ END\n")
QUERIES = ("Why does test_double fail?", "Fix double.", "Run the tests again.")


def call(function: str, heartbeat: bool = True, **args: Any) -> str:
    return json.dumps({"call": {"function": function, **args, "request_heartbeat": heartbeat}})


ANSWER = json.dumps({"call": {"function": "answer"}})


@dataclass
class PlannedModel:
    """A scripted model: per query, the calls its tool loop makes (in order), then its
    answer. The step is told by the calls the pack already shows, so the same model
    serves every pair of a run."""

    plans: dict[str, list[str]]
    answers: dict[str, str]
    requests: list[tuple[str, str]] = field(default_factory=list)  # (kind, query)

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        request = asked(messages)
        query = request.query
        if request.step:
            self.requests.append(("step", query))
            plan = self.plans.get(query, [])
            done = request.calls.count("Function call ")
            return plan[done] if done < len(plan) else ANSWER
        self.requests.append(("answer", query))
        return self.answers.get(query, "I do not know.")


RECORDED = PlannedModel(
    plans={QUERIES[0]: [call("read_file", path="calc.py", start=1, end=0),
                        call("grep", pattern="def double", glob="*.py"),
                        call("run", False, command="tests")],
           QUERIES[1]: [call("read_file", False, path="test_calc.py", start=1, end=0)],
           QUERIES[2]: [call("run", False, command="tests")]},
    answers={QUERIES[0]: "double multiplies by 3, the test expects 2 * 2 == 4.",
             QUERIES[1]: FIX, QUERIES[2]: "The tests pass now."})


def replaying(fix: bool) -> PlannedModel:
    """The replayed model: the recorded reads, one read the record does not hold
    (list_files), the tests in turns 1 and 3, and in turn 3 a read of the file its own
    edit changed; it fixes ``double`` in turn 2 only if ``fix``."""
    return PlannedModel(
        plans={QUERIES[0]: [call("read_file", path="calc.py", start=1, end=0),
                            call("grep", pattern="def double", glob="*.py"),
                            call("list_files", glob=""),
                            call("run", False, command="tests")],
               QUERIES[1]: [call("read_file", False, path="test_calc.py", start=1, end=0)],
               QUERIES[2]: [call("run", command="tests"),
                            call("read_file", False, path="calc.py", start=1, end=0)]},
        answers={QUERIES[0]: "double multiplies by 3.",
                 QUERIES[1]: FIX if fix else "Change the 3 to a 2 in calc.py.",
                 QUERIES[2]: "Here is what the tests say."})


def calc_repo(root: Path) -> Path:
    return make_repo(root, dict(REPO))


async def record_session(repo: Path, folder: Path, embedder: Any, script: Any,
                         model: PlannedModel = RECORDED,
                         queries: tuple[str, ...] = QUERIES) -> Path:
    """An engram session recorded by the real Agent, its edits applied and committed in
    ``repo``: its transcript's path (the session record's ``head`` is the commit before)."""
    script.default = model
    llm = LLM(LLMConfig(model="scripted/recording", backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, data_dir=folder / "home",
                     session_id="recording")
    session_id = new_session_id()
    writer = TranscriptWriter(folder / f"{session_id}.jsonl")
    agent = Agent(registry.create("full", env), llm, env, writer,
                  config=AgentConfig(max_answer_tokens=128))
    agent.start_session(session_id, "test", git(repo, "rev-parse", "HEAD").strip(),
                        repo=str(repo))
    bench = Workbench(agent, repo, ConsentPolicy.preallowed())
    for query in queries:
        turn = await agent.ask(query)
        assert turn.ok, turn.error
        prepared = bench.propose(turn)
        if prepared is not None:
            assert bench.apply(prepared, turn).ok
    writer.close()
    return writer.path


def write_spec(path: Path, session: Path, **fields: Any) -> Path:
    path.write_text(json.dumps({"kind": "agentic", "session": str(session), **fields}))
    return path
