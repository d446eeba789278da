"""The run tool through the real jail (bubblewrap) on a copy of a real repository: the
escape tests of the replay sandbox (tests/replay/test_sandbox_escapes.py) run again with
every probe run as a command of the tool, and what the tool adds (a copy of the working
tree, nothing written back, no network, no home, a timeout, consent before anything)."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory.acting.jail import bwrap
from memory.acting.jail.tree import TreeJail
from memory.acting.tools.consent import ConsentPolicy, Decision
from memory.acting.tools.run import Limits, RunTool
from tests.replay.sandbox import test_sandbox_escapes as escapes

from ...conftest import make_repo

jail = pytest.mark.skipif(bwrap.available() is not None,
                          reason=f"no OS jail here: {bwrap.available()}")
ESCAPES = ["test_runs_as_nobody_without_capabilities", "test_write_through_dir_fd",
           "test_fork_exec_starts_a_jailed_process", "test_ctypes_system",
           "test_kill_a_sibling_process", "test_a_setsid_child_does_not_outlive_the_timeout",
           "test_a_daemon_does_not_outlive_a_normal_exit", "test_a_socket_to_localhost",
           "test_a_fork_bomb_is_bounded_by_the_process_limit",
           "test_a_memory_bomb_is_bounded"]


@dataclass(frozen=True)
class Ran:
    """A run as the escape tests read it."""

    ok: bool
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str
    sandbox: str


def through_the_tool(base: Path):
    """``escapes.run``'s stand-in: the probe committed in a repository of its own and run
    by the run tool (allowed in advance, as headless mode does) in the jail."""
    def run(code: str, limits=escapes.LIMITS, name: str = "probe.py") -> Ran:
        root = make_repo(base / f"repo-{uuid.uuid4().hex[:8]}", {name: code})
        tool = RunTool(root, ConsentPolicy.preallowed(), TreeJail(),
                       Limits(timeout=limits.timeout, memory_bytes=limits.memory_bytes,
                              processes=limits.processes))
        told = asyncio.run(tool(f"python {name}"))
        assert tool.results, told.text
        result = tool.results[-1]
        assert told.meta["consent"] == "preallowed" and told.meta["sandbox"] == "bwrap"
        return Ran(result.ok, result.returncode, result.timed_out, result.stdout,
                   result.stderr, result.sandbox)
    return run


@jail
@pytest.mark.parametrize("name", ESCAPES)
def test_an_escape_through_the_run_tool(name, monkeypatch, tmp_path):
    monkeypatch.setattr(escapes, "run", through_the_tool(tmp_path / "repos"))
    test = getattr(escapes, name)
    test(*([tmp_path] if "tmp_path" in inspect.signature(test).parameters else []))


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo", {
        "calc.py": "def double(x):\n    return x * 3\n",
        "test_calc.py": "from calc import double\n\n\ndef test_double():\n"
                        "    assert double(2) == 4\n",
        ".gitignore": ".env\n"})
    (root / ".env").write_text("API_KEY=not-for-the-jail\n")
    (root / "draft.py").write_text("DRAFT = 'uncommitted work is copied too'\n")
    return root


def allowed(root: Path, **limits) -> RunTool:
    return RunTool(root, ConsentPolicy.preallowed(), TreeJail(), Limits(**limits))


@jail
async def test_writes_stay_in_the_copy_and_the_home_is_not_the_developers(repo, tmp_path):
    planted = tmp_path / "planted.txt"
    planted.write_text("outside the repository")
    before = sorted(p.name for p in repo.iterdir())
    tool = allowed(repo, timeout=20)
    result = await tool(
        "sh -c 'echo x > written.txt; echo y > calc.py; cat draft.py; echo home=$HOME; "
        f"cat {planted} || echo no-planted; touch {repo}/escaped || echo no-escape; "
        f"cat .env || echo no-env; echo listing; ls -A {Path.home()}; echo end'")
    ran = tool.results[-1]
    assert ran.returncode == 0, ran.stderr
    assert "uncommitted work is copied too" in ran.stdout
    assert "no-planted" in ran.stdout and "no-escape" in ran.stdout and "no-env" in ran.stdout
    assert re.search(r"^home=/tmp/engram-jail-\w+/home$", ran.stdout, re.M)
    inside = ran.stdout.split("listing\n")[1].split("end\n")[0].split()
    home_files = [p.name for p in Path.home().iterdir() if p.is_file()]
    assert not set(inside) & set(home_files)  # at most the Python installation's folders
    assert sorted(p.name for p in repo.iterdir()) == before  # nothing written back
    assert (repo / "calc.py").read_text() == "def double(x):\n    return x * 3\n"
    assert "outside the repository" not in result.text


@jail
async def test_no_network_even_to_a_server_on_this_machine(repo):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        tool = allowed(repo, timeout=20)
        await tool(f"python -c \"import socket; socket.create_connection(('127.0.0.1', {port}),"
                   " timeout=3); print('connected')\"")
        ran = tool.results[-1]
    finally:
        server.close()
    assert ran.returncode != 0 and "connected" not in ran.stdout
    assert "Error" in ran.stderr


@jail
async def test_a_command_past_its_timeout_is_killed(repo):
    tool = allowed(repo, timeout=1.5)
    result = await tool("sleep 30")
    assert not result.ok and result.meta["timed_out"]
    assert "timed out after" in result.text and tool.results[-1].seconds < 10


@jail
async def test_the_projects_tests_run_in_the_jail_after_consent(repo):
    asked = []

    async def asker(command: str) -> Decision:
        asked.append(command)
        return Decision.ONCE

    tool = RunTool(repo, ConsentPolicy(asker), TreeJail(), Limits(timeout=60))
    result = await tool("tests")
    assert asked == ["python -m pytest -q -x -p no:cacheprovider"]
    assert not result.ok and result.meta["returncode"] == 1
    assert "assert 6 == 4" in result.text and "1 failed" in result.text


@jail
async def test_a_calls_seconds_are_the_commands_not_the_wait_for_consent(repo):
    """The developer takes two seconds to allow it: the call says how long the command
    ran, which its line in the chat shows."""
    import time

    from tui.calls import call_line

    async def slow_asker(command: str) -> Decision:
        await asyncio.sleep(2.0)
        return Decision.ONCE

    tool = RunTool(repo, ConsentPolicy(slow_asker), TreeJail(), Limits(timeout=60))
    started = time.monotonic()
    result = await tool("python -c pass")
    took = time.monotonic() - started
    [ran] = tool.results
    assert result.ok and result.meta["seconds"] == round(ran.seconds, 3)
    assert took >= 2.0 and result.meta["seconds"] <= took - 1.9
    line = call_line({"function": "run", "args": {"command": "python -c pass"},
                      "ok": True, **result.meta})
    assert "allowed once" in line and "exit 0" in line


@jail
async def test_the_output_reaches_the_model_and_the_transcript(repo, tmp_path, embedder,
                                                               script):
    from memory.acting.tools.box import RepoTools
    from memory.backends import BackendEnv, registry
    from memory.llm.client import LLM, LLMConfig
    from memory.transcript import TranscriptWriter, read_transcript
    from memory.turn.agent import Agent, AgentConfig
    from tests.asked import asked

    steps = [json.dumps({"call": {"function": "run", "command": "tests",
                                  "request_heartbeat": False}})]

    def reply(messages):
        if asked(messages).step:
            return steps.pop(0) if steps else json.dumps({"call": {"function": "answer"}})
        return "double multiplies by 3; it should multiply by 2."

    script.default = reply
    consented = []

    async def asker(command: str) -> Decision:
        consented.append(command)
        return Decision.SESSION

    llm = LLM(LLMConfig(model="scripted/test", backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, data_dir=tmp_path / "home", session_id="s")
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    agent = Agent(registry.create("full", env), llm, env, writer,
                  config=AgentConfig(max_answer_tokens=64))
    agent.tools = RepoTools(repo, runner=RunTool(repo, ConsentPolicy(asker), TreeJail(),
                                                 Limits(timeout=60)))
    turn = await agent.ask("why does test_double fail?")
    assert turn.ok and consented == ["python -m pytest -q -x -p no:cacheprovider"]
    assert "assert 6 == 4" in asked(script.calls[-1]).calls  # the output reached the model
    [called] = turn.meta["tools"]["calls"]
    assert called["consent"] == "asked-session" and called["returncode"] == 1
    writer.close()
    [record] = read_transcript(writer.path).tool_calls
    assert record.function == "run" and record.turn == 0 and not record.ok
    assert "assert 6 == 4" in record.result and record.data["consent"] == "asked-session"
