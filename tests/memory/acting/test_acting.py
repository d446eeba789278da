"""The Workbench on real git repositories in tmp dirs, with the real Agent, transcript and
jail and a scripted model: proposals recorded with nothing written, apply commits, undo
restores byte for byte, refusals write nothing, the developer's uncommitted work is never
lost, the repository tools are installed and a command without consent never runs."""

from __future__ import annotations

import json

import pytest

from memory.acting.edits import EDIT_FORMAT
from memory.acting.jail.tree import TreeJail
from memory.acting.tools.box import RepoTools
from memory.acting.tools.consent import ConsentPolicy
from memory.acting.workbench import Workbench
from memory.backends import BackendEnv, registry
from memory.llm.client import LLM, LLMConfig
from memory.transcript import TranscriptWriter, read_transcript, resume_from
from memory.turn.agent import Agent, AgentConfig
from tests.asked import asked

from ...conftest import git, make_repo

APP = 'def greet():\n    return "hi"\n\n\ndef part():\n    return 1\n'
OTHER = "VALUE = 1\n"


def edit(path: str, search: str, replace: str) -> str:
    return (f"Here is the change.\n\n@@@ EDIT {path}\n@@@ SEARCH\n{search}\n"
            f"@@@ REPLACE\n{replace}\n@@@ END\n")


GREET = edit("app.py", '    return "hi"', '    return "hello"')


def call(function: str, heartbeat: bool = False, **args) -> str:
    body = {"function": function, **args}
    if function != "answer":
        body["request_heartbeat"] = heartbeat
    return json.dumps({"call": body})


def scripted(answer: str, steps: list[str] | None = None):
    steps = list(steps or [])

    def reply(messages):
        if asked(messages).step:
            return steps.pop(0) if steps else call("answer")
        return answer
    return reply


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"app.py": APP, "other.py": OTHER,
                                         "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0binary"})


@pytest.fixture
def bench(tmp_path, repo, script, embedder):
    llm = LLM(LLMConfig(model="scripted/test", backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, data_dir=tmp_path / "home", session_id="s1")
    writer = TranscriptWriter(tmp_path / "s1.jsonl")
    agent = Agent(registry.create("full", env), llm, env, writer,
                  config=AgentConfig(max_answer_tokens=64))
    yield Workbench(agent, repo, ConsentPolicy.deny_all())
    writer.close()


def edits_recorded(bench: Workbench) -> list[dict]:
    transcript = read_transcript(bench.agent.transcript.path)
    assert transcript.problems == []
    return [r.data for r in transcript.edits]


def status(repo) -> str:
    return git(repo, "status", "--porcelain")


async def test_tools_installed_prompt_explains_edits_and_a_command_needs_consent(
        bench, repo, script):
    script.default = scripted("done", [call("run", command="touch pwned")])
    agent = bench.agent
    assert isinstance(agent.tools, RepoTools) and agent.tools.root == repo
    assert isinstance(agent.tools.runner.jail, TreeJail)
    assert {t.name for t in agent.tools.tools()} >= {"read_file", "grep", "list_files", "run"}
    turn = await agent.ask("make a file")
    [called] = turn.meta["tools"]["calls"]
    assert called["function"] == "run" and not called["ok"]
    assert called["consent"] == "no-asker" and "nothing was run" in called["result"]
    assert agent.tools.runner.results == [] and not (repo / "pwned").exists()
    answer_request = script.calls[-1]
    assert EDIT_FORMAT.strip() in answer_request[0]["content"]
    assert answer_request[1]["content"].startswith("File app.py:")  # the worked example
    assert answer_request[2]["content"].startswith("@@@ EDIT app.py")
    last = asked(answer_request)  # the query, then the turn's (refused) call
    assert last.query == "make a file" and not last.step
    assert 'Function call run({"command": "touch pwned"' in last.calls
    assert bench.propose(turn) is None and edits_recorded(bench) == []


def test_without_commands_there_is_no_run_tool(bench, repo):
    other = Workbench(bench.agent, repo, ConsentPolicy.preallowed(), commands=False)
    assert other.tools.runner is None
    assert "run" not in {t.name for t in bench.agent.tools.tools()}
    prompt = bench.agent.config.system_prompt
    assert prompt.count("@@@ EDIT path/to/file.py") == 1  # a second Workbench adds it once


async def test_a_proposal_is_recorded_applied_as_a_commit_and_undone_byte_for_byte(
        bench, repo, script):
    script.default = scripted(GREET)
    head = git(repo, "rev-parse", "HEAD").strip()
    turn = await bench.agent.ask("Make greet say hello")
    prepared = bench.propose(turn)
    assert prepared is not None and prepared.ok and prepared.paths == ["app.py"]
    assert bench.pending is prepared
    assert (repo / "app.py").read_text() == APP and status(repo) == ""  # nothing written
    applied = bench.apply(prepared, turn)
    assert applied.ok and bench.pending is None
    assert (repo / "app.py").read_text() == APP.replace('"hi"', '"hello"')
    assert git(repo, "log", "-1", "--format=%s").strip() == "engram: Make greet say hello"
    assert git(repo, "rev-parse", "HEAD^").strip() == head and status(repo) == ""
    undone = bench.undo()
    assert undone.ok and undone.commit == applied.commit
    assert (repo / "app.py").read_bytes() == APP.encode()
    assert git(repo, "rev-parse", "HEAD").strip() == head and status(repo) == ""
    assert not bench.undo().ok  # HEAD is the developer's commit now
    records = edits_recorded(bench)
    assert [r["op"] for r in records] == ["proposed", "applied", "undone", "refused"]
    proposed, applied_r, undone_r, refused = records
    assert proposed["turn"] == 0 and proposed["paths"] == ["app.py"] and proposed["ok"]
    assert '+    return "hello"' in proposed["diff"]
    assert applied_r["commit"] == applied.commit and applied_r["turn"] == 0
    assert undone_r["commit"] == applied.commit and undone_r["paths"] == ["app.py"]
    assert refused["of"] == "undo" and "not an edit engram applied" in refused["message"]


async def test_a_rejected_proposal_writes_nothing_and_is_recorded(bench, repo, script):
    script.default = scripted(GREET)
    turn = await bench.agent.ask("Make greet say hello")
    prepared = bench.propose(turn)
    bench.reject(prepared, turn)
    assert bench.pending is None and status(repo) == ""
    assert (repo / "app.py").read_text() == APP
    assert [(r["op"], r["turn"]) for r in edits_recorded(bench)] == [
        ("proposed", 0), ("rejected", 0)]


async def test_a_newer_proposal_supersedes_the_pending_one(bench, script):
    script.default = scripted(GREET)
    first = bench.propose(await bench.agent.ask("Make greet say hello"))
    second = bench.propose(await bench.agent.ask("again"))
    assert bench.pending is second and second is not first
    ops = [(r["op"], r["turn"]) for r in edits_recorded(bench)]
    assert ops == [("proposed", 0), ("proposed", 1), ("rejected", 0)]


@pytest.mark.parametrize(("answer", "expected"), [
    (edit("../outside.py", "", "x = 1"), "outside"),
    (edit("logo.png", "PNG", "JPG"), "binary"),
    (edit("app.py", "    return 2", "    return 3"), "app.py"),
])
async def test_a_refused_edit_writes_nothing_and_is_recorded(bench, repo, tmp_path, script,
                                                            answer, expected):
    script.default = scripted(answer)
    turn = await bench.agent.ask("change it")
    prepared = bench.propose(turn)
    assert prepared is not None and not prepared.ok and bench.pending is None
    assert expected in prepared.message and "nothing was written" in prepared.message
    applied = bench.apply(prepared, turn)
    assert not applied.ok
    assert status(repo) == "" and not (tmp_path / "outside.py").exists()
    assert (repo / "app.py").read_text() == APP
    proposed, refused = edits_recorded(bench)
    assert proposed["op"] == "proposed" and not proposed["ok"]
    assert proposed["message"] == prepared.message and proposed["diff"] == ""
    assert refused["op"] == "refused" and refused["of"] == "apply"


async def test_a_file_changed_since_the_model_read_it_is_refused(bench, repo, script):
    script.default = scripted(GREET, [call("read_file", path="app.py", start=1, end=0)])
    turn = await bench.agent.ask("Make greet say hello")
    assert turn.meta["tools"]["calls"][0]["ok"]
    changed = APP + "\n\ndef added():\n    return 2\n"
    (repo / "app.py").write_text(changed)  # the developer changes and commits it meanwhile
    git(repo, "commit", "-qam", "developer's change")
    prepared = bench.propose(turn)
    assert not prepared.ok and "changed since the model saw it" in prepared.message
    assert (repo / "app.py").read_text() == changed and status(repo) == ""


async def test_a_change_after_the_proposal_makes_the_apply_refused(bench, repo, script):
    script.default = scripted(GREET)
    turn = await bench.agent.ask("Make greet say hello")
    prepared = bench.propose(turn)
    mine = APP.replace("return 1", "return 11")
    (repo / "app.py").write_text(mine)  # the developer edits it before saying yes
    applied = bench.apply(prepared, turn)
    assert not applied.ok and "nothing was written" in applied.message
    assert (repo / "app.py").read_text() == mine
    assert git(repo, "log", "--format=%s").splitlines() == ["init"]
    assert edits_recorded(bench)[-1]["op"] == "refused"


async def test_uncommitted_work_in_the_same_file_is_never_lost(bench, repo, script):
    mine = APP.replace("return 1", "return 11")
    (repo / "app.py").write_text(mine)
    script.default = scripted(GREET)
    turn = await bench.agent.ask("Make greet say hello")
    prepared = bench.propose(turn)
    assert not prepared.ok and "uncommitted changes" in prepared.message
    assert not bench.apply(prepared, turn).ok
    assert (repo / "app.py").read_text() == mine
    assert git(repo, "log", "--format=%s").splitlines() == ["init"]


async def test_uncommitted_work_in_other_files_is_kept_out_of_the_commit_and_the_undo(
        bench, repo, script):
    (repo / "other.py").write_text("VALUE = 2  # mine, not committed\n")
    (repo / "staged.py").write_text("STAGED = True\n")
    git(repo, "add", "staged.py")
    script.default = scripted(GREET)
    turn = await bench.agent.ask("Make greet say hello")
    applied = bench.apply(bench.propose(turn), turn)
    assert applied.ok and applied.paths == ("app.py",)
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == ["app.py"]
    assert status(repo) == " M other.py\nA  staged.py\n"
    assert bench.undo().ok
    assert (repo / "app.py").read_bytes() == APP.encode()
    assert (repo / "other.py").read_text() == "VALUE = 2  # mine, not committed\n"
    assert status(repo) == " M other.py\nA  staged.py\n"


async def test_a_resumed_session_reads_the_edit_records_back(bench, repo, script):
    script.default = scripted(GREET)
    turn = await bench.agent.ask("Make greet say hello")
    bench.apply(bench.propose(turn), turn)
    bench.undo()
    bench.agent.transcript.close()
    resumed = resume_from(bench.agent.transcript.path)
    assert resumed.problems == [] and [t.user for t in resumed.turns] == ["Make greet say hello"]
    with bench.agent.transcript.path.open("a") as out:  # a record engram could not have written
        out.write(json.dumps({"type": "edit", "op": "applied", "ok": "yes"}) + "\n")
    transcript = read_transcript(bench.agent.transcript.path)
    assert [r.op for r in transcript.edits] == ["proposed", "applied", "undone"]
    assert len(transcript.problems) == 1 and "'ok'" in transcript.problems[0]


async def test_reads_of_a_turn_never_proposed_do_not_count_against_the_next(
        bench, repo, script):
    read = call("read_file", path="app.py", start=1, end=0)
    script.default = scripted("no edit here", [read])
    await bench.agent.ask("what does greet do?")  # the app never proposed this one
    (repo / "app.py").write_text(APP + "# more\n")
    git(repo, "commit", "-qam", "developer's change")
    script.default = scripted(GREET, [read])
    turn = await bench.agent.ask("Make greet say hello")
    assert list(bench.seen()) == ["app.py"]
    prepared = bench.propose(turn)
    assert prepared.ok, prepared.message
    assert bench.seen() == {}


def test_the_tools_follow_a_model_switch_to_and_from_constrained_decoding(bench):
    from types import SimpleNamespace
    assert bench.tools.constrained is False
    bench.agent.env.llm = SimpleNamespace(constrained=lambda: True)  # /model to a grammar model
    read = next(t for t in bench.tools.tools() if t.name == "read_file")
    assert bench.tools.constrained is True and "app.py" in json.dumps(read.parameters)
    bench.agent.env.llm = SimpleNamespace(constrained=lambda: False)
    bench.tools.tools()
    assert bench.tools.constrained is False


async def test_an_applied_edit_and_its_undo_reach_the_index_and_a_failed_refresh_is_said(
        tmp_path, repo, script, embedder):
    """The workbench is the one place an applied or undone edit refreshes the index (the
    app, the headless --apply and replay's agentic pairs all go through it): the next
    search sees the new code; a refresh that fails leaves the commit and says why."""
    from memory.index.repo import RepoIndex
    from memory.store import Store

    index = RepoIndex(repo, Store(tmp_path / "index.lance"), embedder)
    index.refresh()
    llm = LLM(LLMConfig(model="scripted/test", backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, repo=index, data_dir=tmp_path / "home",
                     session_id="s2")
    agent = Agent(registry.create("full", env), llm, env, None,
                  config=AgentConfig(max_answer_tokens=64))
    bench = Workbench(agent, repo, ConsentPolicy.deny_all())

    def code() -> str:
        return "".join(chunk.code for chunk in index.chunks())
    script.default = scripted(GREET)
    turn = await agent.ask("Make greet say hello")
    applied = bench.apply(bench.propose(turn), turn)
    assert applied.ok and applied.index_error == "" and '"hello"' in code()
    undone = bench.undo()
    assert undone.ok and undone.index_error == "" and '"hello"' not in code()

    def broken(*args, **kwargs):
        raise OSError("disk full")
    index.refresh = broken
    turn = await agent.ask("Make greet say hello")
    applied = bench.apply(bench.propose(turn), turn)
    assert applied.ok and applied.index_error == "OSError: disk full"
    assert '"hello"' in (repo / "app.py").read_text()
