"""The tool loop with the repository tools, a scripted model and a real repository:
every call recorded, what the loop sends kept within its limit, and each backend's
policy (mask masks old outputs, compact summarises them) recorded as it acts."""

from __future__ import annotations

import json

import pytest

from memory.acting.toolloop import Combined, ToolResult, run_tools
from memory.acting.tools.box import RepoTools
from memory.acting.tools.trajectory import Step, Trajectory, fit
from memory.backends.compact import CALLS_PROMPT, SummariseCalls
from memory.backends.mask import MaskObservations
from memory.llm.client import LLM, LLMConfig
from memory.types import ContextPack, Section
from tests.asked import asked

from ...conftest import make_repo

BIG = "".join(f"value_{i} = compute({i}, 'some long argument text to fill the line')\n"
              for i in range(1, 401))


def call(function: str, heartbeat: bool = True, **args) -> str:
    body = {"function": function, **args}
    if function != "answer":
        body["request_heartbeat"] = heartbeat
    return json.dumps({"call": body})


def read(path: str) -> str:
    return call("read_file", path=path, start=1, end=0)


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {f"pkg/mod{i}.py": BIG for i in range(4)}
                     | {"pkg/util.py": "def helper():\n    return 42\n"})


def llm() -> LLM:
    return LLM(LLMConfig(model="scripted/test", backoff=0.01))


def pack_of(model: LLM) -> ContextPack:
    system = "You are engram."
    return ContextPack("where is value_7 set?", [Section("system", "system", system,
                                                          model.count_tokens(system))],
                       model.count_tokens("where is value_7 set?"))


def steps_then(replies: list[str], notes: str = "notes on the calls"):
    """Replies by prompt: the tool-loop steps in order (then answer), call notes."""
    replies = list(replies)

    def reply(messages):
        system = messages[0]["content"]
        if system.startswith(CALLS_PROMPT[:40]):
            return json.dumps({"notes": notes})
        if asked(messages).step:
            return replies.pop(0) if replies else call("answer")
        return "the answer"
    return reply


async def test_calls_are_recorded_and_shown_to_the_model(repo, script):
    script.default = steps_then([call("grep", pattern="def helper", glob="*.py"),
                                 call("read_file", False, path="pkg/util.py", start=1,
                                      end=0)])
    model, seen = llm(), []
    pack = pack_of(model)
    outcome = await run_tools(model, RepoTools(repo), pack, on_call=seen.append)
    assert [c["function"] for c in outcome.calls] == ["grep", "read_file"]
    assert seen == outcome.calls and outcome.steps == 2  # no heartbeat: answered after
    assert "pkg/util.py:1:def helper():" in outcome.calls[0]["result"]
    assert [s.source for s in pack.sections] == ["system", "call:1:grep", "call:2:read_file"]
    assert "Function call read_file(" in pack.sections[2].text
    assert pack.sections[2].text.endswith("1  def helper():\n2      return 42")
    first, second = script.calls[0], script.calls[1]
    assert "functions (tools on the repository)" in second[-1]["content"]
    assert "def helper():" in second[-1]["content"]  # the first call's output reached it
    # the calls and the step's prompt follow the query: the system message is the same
    # for both steps (a prompt cache evaluates it once)
    assert first[:-1] == second[:-1] and first[0]["content"].startswith("You are engram.")
    assert asked(second).query == "where is value_7 set?" and asked(second).step
    assert "Function call grep(" in asked(second).calls
    assert outcome.peak <= outcome.limit and "dropped" not in outcome.meta()


async def test_a_long_turn_is_kept_within_the_limit_and_the_record_says_what_went(repo,
                                                                                script):
    script.default = steps_then([read(f"pkg/mod{i}.py") for i in range(4)])
    model = llm()
    pack = pack_of(model)
    limit = 4000
    outcome = await run_tools(model, RepoTools(repo), pack, 8, limit=limit)
    assert len(outcome.calls) == 4 and all(c["ok"] for c in outcome.calls)
    for messages in script.calls:  # every step and the final pack: within the limit
        assert model.count_messages(messages) <= limit + 300
    assert outcome.peak <= limit and pack.tokens <= limit
    actions = [(e["step"], e["action"], e["by"]) for e in outcome.dropped]
    assert (1, "masked", "window") in actions and (3, "masked", "window") in actions
    masked = next(s for s in pack.sections if s.source == "call:1:read_file:masked")
    assert "[output of read_file omitted: " in masked.text
    assert "last line: [262 more lines: read_file with start=139]" in masked.text
    assert 'Function call read_file({"path": "pkg/mod0.py"' in masked.text


async def test_mask_masks_outputs_older_than_its_window(repo, script):
    script.default = steps_then([read(f"pkg/mod{i}.py") for i in range(3)])
    model = llm()
    pack = pack_of(model)
    outcome = await run_tools(model, RepoTools(repo), pack, 6, limit=100_000,
                              condenser=MaskObservations(keep=1))
    assert [(e["step"], e["action"], e["by"]) for e in outcome.dropped] == [
        (1, "masked", "mask"), (2, "masked", "mask")]
    assert [s.source for s in pack.sections[1:]] == [
        "call:1:read_file:masked", "call:2:read_file:masked", "call:3:read_file"]
    assert outcome.dropped[0]["text"].startswith("[output of read_file omitted")


async def test_compact_summarises_old_outputs_when_the_calls_fill_the_room(repo, script):
    script.default = steps_then([read(f"pkg/mod{i}.py") for i in range(3)],
                                notes="mod0.py and mod1.py set value_1 to value_400.")
    model = llm()
    pack = pack_of(model)
    outcome = await run_tools(model, RepoTools(repo), pack, 6, limit=9000,
                              condenser=SummariseCalls(model, share=0.8))
    summarised = [e for e in outcome.dropped if e["action"] == "summarised"]
    assert summarised and all(e["by"] == "compact" for e in summarised)
    assert summarised[-1]["text"] == "mod0.py and mod1.py set value_1 to value_400."
    summary = next(s for s in pack.sections if s.source == "calls:summary")
    assert "mod0.py and mod1.py set value_1" in summary.text
    assert pack.sections[-1].source == "call:3:read_file"  # the newest stays whole
    notes_prompt = next(m for m in script.calls if m[0]["content"].startswith(CALLS_PROMPT))
    assert "value_7 = compute(7" in notes_prompt[-1]["content"]  # it saw the outputs
    assert outcome.peak <= 9000


async def test_a_failed_summary_falls_back_to_the_window(repo, script):
    replies = [read(f"pkg/mod{i}.py") for i in range(3)]

    def reply(messages):
        system = messages[0]["content"]
        if system.startswith(CALLS_PROMPT[:40]):
            return "not json at all"
        return replies.pop(0) if replies and asked(messages).step else call("answer")

    script.default = reply
    model = llm()
    outcome = await run_tools(model, RepoTools(repo), pack_of(model), 6, limit=5000,
                              condenser=SummariseCalls(model, share=0.8))
    assert {e["by"] for e in outcome.dropped} == {"window"} and outcome.peak <= 5000


def test_fit_clips_the_newest_and_drops_what_cannot_fit():
    count = len  # a character is a token here
    trajectory = Trajectory([Step(1, "grep", {}, True, "a" * 500),
                             Step(2, "read_file", {}, True, "b" * 2000)])
    fit(trajectory, 900, count)
    assert [s.state for s in trajectory.steps] == ["masked", "clipped"]
    assert trajectory.tokens(count) <= 900
    assert "output cut here to fit" in trajectory.steps[1].shown
    fit(trajectory, 40, count)
    assert all(s.state == "dropped" for s in trajectory.steps)
    assert trajectory.tokens(count) == 0
    assert [e.action for e in trajectory.events][-2:] == ["dropped", "dropped"]


async def test_combined_toolboxes_route_each_call(repo):
    class Memory:
        def tools(self):
            from memory.acting.toolloop import Tool
            return [Tool("core_memory_append", "add", {"content": {"type": "string"}})]

        async def call(self, name, args):
            return ToolResult(f"memory got {args['content']}")

    box = Combined([Memory(), RepoTools(repo)])
    assert [t.name for t in box.tools()][:2] == ["core_memory_append", "read_file"]
    assert (await box.call("core_memory_append", {"content": "x"})).text == "memory got x"
    assert (await box.call("list_files", {"glob": "util.py"})).text.endswith("pkg/util.py")
    assert not (await box.call("nope", {})).ok


async def test_a_repeated_call_ends_the_loop_without_running_again(repo, script):
    grep_it = call("grep", pattern="def helper", glob="")
    script.default = steps_then([grep_it, call("list_files", glob="*.py"), grep_it])
    model = llm()
    outcome = await run_tools(model, RepoTools(repo), pack_of(model), 6)
    assert [c["function"] for c in outcome.calls] == ["grep", "list_files"]
    assert outcome.steps == 3 and outcome.meta()["stopped"] == \
        "step 3 repeated the call of step 1"


class _Unrepeatable:
    """A toolbox that lets a call come again (no ``repeats_end``), as a backend's memory
    functions do: only the denial rule can end a repeat here."""

    def __init__(self, runner) -> None:
        self.runner = runner

    def tools(self):
        from memory.acting.tools.run import TOOL
        return [TOOL]

    async def call(self, name, args):
        return await self.runner(str(args.get("command", "")))


async def test_a_denied_command_is_never_asked_for_again_in_the_turn(repo, script,
                                                                    monkeypatch):
    from memory.acting.jail.tree import TreeJail
    from memory.acting.tools.consent import ConsentPolicy, Decision
    from memory.acting.tools.run import RunTool

    monkeypatch.setattr(TreeJail, "available", lambda self: None)  # asked, never run
    asked_for: list[str] = []

    async def deny(command: str) -> Decision:
        asked_for.append(command)
        return Decision.DENY

    run_it = call("run", command="pytest -q")
    script.default = steps_then([run_it, run_it, call("run", command="ls")])
    model = llm()
    runner = RunTool(repo, ConsentPolicy(asker=deny), TreeJail())
    pack = pack_of(model)
    outcome = await run_tools(model, _Unrepeatable(runner), pack, 6)
    assert asked_for == ["pytest -q"]  # the developer was asked once
    [denied] = outcome.calls
    assert denied["consent"] == "denied" and not denied["ok"] and runner.results == []
    assert "Do not ask for it again in this turn" in denied["result"]
    assert "Do not ask for it again" in pack.sections[-1].text  # the model was told
    assert outcome.steps == 2 and outcome.meta()["stopped"] == \
        "step 2 asked again for what the developer denied at step 1"
