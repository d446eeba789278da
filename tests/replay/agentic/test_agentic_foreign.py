"""A Claude Code session (hand-written in Claude Code's format: no real one can be
recorded here) replayed with its tools; how Claude Code's and Codex's calls map to
engram's tools; what a spec that cannot run says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.acting.jail import bwrap
from memory.acting.tools import grep, listing, read
from memory.transcript import read_transcript
from replay.agentic.calls import foreign_call, is_test, shell_call
from replay.agentic.source import load_spec
from replay.core.errors import SourceError
from replay.core.sources import load_source
from tests.replay.agentic.agentic_recording import (
    BUGGY,
    FIX,
    QUERIES,
    PlannedModel,
    calc_repo,
    call,
    write_spec,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "foreign"
CLAUDE = FIXTURES / "claude-agentic.jsonl"
CODEX = FIXTURES / "rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"
jail = pytest.mark.skipif(bwrap.available() is not None,
                          reason=f"no OS jail here, so the tests cannot run again: "
                                 f"{bwrap.available()}")


def test_claude_codes_calls_are_read_in_engrams_terms(tmp_path):
    spec = write_spec(tmp_path / "spec.json", CLAUDE, repo="calc")
    [source] = load_source(spec)
    assert source.queries == QUERIES and source.origin == "claude-code 2.0.61"
    assert source.repo == str((tmp_path / "calc").resolve()) and source.commit == ""
    calls = [(c.turn, c.function, c.args, c.kind, c.tool) for c in source.log.calls]
    assert calls == [
        (0, "read_file", {"path": "calc.py", "start": 1, "end": 0}, "read", "Read"),
        (0, "run", {"command": "python -m pytest -q test_calc.py"}, "test", "Bash"),
        (1, "grep", {"pattern": "def double", "glob": ""}, "read", "Grep"),
        (1, "edit", calls[3][2], "edit", "Edit"),
        (2, "run", {"command": "python -m pytest -q"}, "test", "Bash")]
    first = source.log.calls[0]
    assert first.result.startswith("     1\tdef double(x):") and first.ok
    assert not source.log.calls[1].ok  # is_error: the failing tests
    # a narrower read of a file read whole is answered by that read; another file is not
    assert source.log.find("read_file", {"path": "calc.py", "start": 2, "end": 2}, 1) is first
    assert source.log.find("read_file", {"path": "test_calc.py"}, 0) is None
    assert source.log.find("run", {"command": "python -m pytest -q"}, 2) is None  # tests rerun


def test_codex_shell_reads_and_tests():
    assert shell_call(["bash", "-lc", "sed -n 3,9p /w/shop/cart.py"], "/w") == (
        "read_file", {"path": "shop/cart.py", "start": 3, "end": 9}, "read")
    assert shell_call(["cat", "./README.md"], "/w")[:2] == (
        "read_file", {"path": "README.md", "start": 1, "end": 0})
    assert shell_call(["rg", "--files"], "/w") == ("list_files", {"glob": ""}, "read")
    assert shell_call(["rg", "-n", "TAX ="], "/w") == (
        "grep", {"pattern": "TAX =", "glob": ""}, "read")
    assert shell_call(["bash", "-lc", "cat a.py | wc -l"], "/w") == (
        "run", {"command": "cat a.py | wc -l"}, "command")
    assert shell_call(["pytest", "-q", "tests/test_cart.py"], "/w")[2] == "test"
    assert foreign_call("apply_patch", "*** Begin Patch", "/w")[2] == "edit"
    assert is_test("tests") and is_test("make test") and not is_test("cat pytest.ini")


def test_a_codex_rollouts_calls_with_their_outputs(tmp_path):
    spec = write_spec(tmp_path / "spec.json", CODEX, repo=".")
    [source] = load_source(spec)
    test, patch = source.log.calls
    assert (test.function, test.kind, test.turn) == ("run", "test", 0)
    assert test.result == "1 failed, 1 passed" and not test.ok  # exit_code 1
    assert (patch.kind, patch.turn, patch.result) == ("edit", 1, "Success. Updated shop/cart.py")


@pytest.mark.parametrize("data, message", [
    ({"kind": "agentic"}, "'session' must name"),
    ({"kind": "agentic", "session": "nowhere.jsonl"}, "is not there"),
    ({"kind": "agentic", "session": str(CLAUDE), "tests": "test_x.py"}, "'tests' must be a list"),
])
def test_a_bad_spec_is_a_clear_error(tmp_path, data, message):
    with pytest.raises(SourceError, match=message):
        load_spec(tmp_path / "spec.json", data)


def test_an_aider_history_has_no_calls_to_replay(tmp_path):
    history = tmp_path / ".aider.chat.history.md"
    history.write_text("# aider chat started at 2025-06-19 14:32:16\n\n#### Hello?\n\nHi.\n")
    with pytest.raises(SourceError, match="records no tool calls"):
        load_spec(tmp_path / "spec.json", {"kind": "agentic", "session": str(history)})


@jail
def test_a_claude_code_session_replayed_with_its_tools(tmp_path, embedder, script,
                                                       monkeypatch):
    repo = calc_repo(tmp_path / "calc")
    spec = write_spec(tmp_path / "claude.json", CLAUDE, repo="calc", id="claude-calc")
    ran: list[str] = []
    for module, name in ((read, "read_file"), (grep, "grep"), (listing, "list_files")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _r=real, _n=name, **k:
                            (ran.append(_n), _r(*a, **k))[1])
    script.default = PlannedModel(
        plans={QUERIES[0]: [call("read_file", path="calc.py", start=1, end=0),
                            call("run", False, command="tests")],
               QUERIES[1]: [call("grep", False, pattern="def double", glob="")],
               QUERIES[2]: [call("run", command="tests"),
                            call("run", False, command="git status")]},
        answers={QUERIES[0]: "It multiplies by 3.", QUERIES[1]: FIX,
                 QUERIES[2]: "They pass."})
    script.count_prompt = True
    from tui.cli import main

    out = tmp_path / "run"
    assert main(["replay", str(spec), "--backends", "full,mask", "--model", "scripted/replay",
                 "--out", str(out), "--max-tokens", "128"]) == 0
    rows = {r["backend"]: r for r in map(json.loads, (out / "pairs.jsonl").open())}
    assert set(rows) == {"full", "mask"} and ran == []  # no read ran live
    for name, row in rows.items():
        agentic = row["agentic"]
        assert row["error"] is None and row["origin"] == "claude-code 2.0.61"
        assert not agentic["commit_recorded"]  # Claude Code records no commit: HEAD
        assert agentic["answered"] == {"record": 2, "live": 0, "jail": 2, "refused": 1}
        assert agentic["recorded"] == {"read": 2, "test": 2, "edit": 1}
        assert agentic["tests_pass"] and agentic["edits_applied"] == 1
        assert agentic["tests"]["targets"] == ["test_calc.py"]  # the spec names none: git's
        assert all(t["step_prompt_tokens"] > 0 for t in agentic["turns"])
        print(f"{name}: in-turn prompt tokens {agentic['prompt_tokens_in_turns']} (steps "
              f"{agentic['step_prompt_tokens']}, answers {agentic['answer_prompt_tokens']})")
        calls = read_transcript(out / "conversations" / f"claude-calc__{name}.jsonl").tool_calls
        assert calls[0].result.startswith("     1\tdef double(x):")  # Claude Code's own output
        assert calls[0].data["recorded_as"] == "Read"
        assert "assert 6 == 4" in calls[1].result and calls[1].data["answered"] == "jail"
        assert calls[-1].data["answered"] == "refused" and "Not run" in calls[-1].result
    assert (repo / "calc.py").read_text() == BUGGY


def test_what_cannot_be_replayed_is_said_before_anything_runs(tmp_path):
    from types import SimpleNamespace

    from replay.agentic.benchmark import BENCHMARK

    replay = SimpleNamespace(config=SimpleNamespace(repo=None))
    calc_repo(tmp_path / "calc")
    (tmp_path / "plain").mkdir()
    cases = (({"repo": "calc"}, None),
             ({"repo": "calc", "commit": "0123abcd"}, "commit 0123abcd is not in"),
             ({"repo": "plain"}, "is not a git repository"),
             ({}, "is not a git repository"))  # the session's /home/dev/calc is not here
    for fields, said in cases:
        spec = write_spec(tmp_path / "spec.json", CLAUDE, **fields)
        [source] = load_source(spec)
        problem = BENCHMARK.problem(replay, source)
        assert (problem is None) if said is None else (said in problem), (fields, problem)


CODEX_AGENTIC = FIXTURES / "rollout-2025-11-04T10-00-00-019a4f00-1111-7222-8333-944445555666.jsonl"


@jail
def test_a_codex_rollout_replayed_with_its_shell_reads(tmp_path, embedder, script):
    calc_repo(tmp_path / "calc")
    spec = write_spec(tmp_path / "codex.json", CODEX_AGENTIC, repo="calc", id="codex-calc")
    [source] = load_source(spec)
    assert [(c.function, c.kind) for c in source.log.calls] == [
        ("read_file", "read"), ("run", "test"), ("read_file", "read"), ("edit", "edit"),
        ("run", "test")]
    script.default = PlannedModel(
        plans={QUERIES[0]: [call("read_file", path="calc.py", start=1, end=0),
                            call("run", False, command="tests")],
               QUERIES[1]: [call("read_file", False, path="test_calc.py", start=1, end=5)],
               QUERIES[2]: [call("run", False, command="tests")]},
        answers={QUERIES[0]: "It multiplies by 3.", QUERIES[1]: FIX, QUERIES[2]: "Passed."})
    from tui.cli import main

    out = tmp_path / "run"
    assert main(["replay", str(spec), "--backends", "full", "--model", "scripted/replay",
                 "--out", str(out), "--max-tokens", "128"]) == 0
    [row] = map(json.loads, (out / "pairs.jsonl").open())
    agentic = row["agentic"]
    assert row["error"] is None and row["origin"] == "codex 0.46.0"
    assert agentic["answered"] == {"record": 2, "live": 0, "jail": 2, "refused": 0}
    assert agentic["tests_pass"]
    calls = read_transcript(out / "conversations" / "codex-calc__full.jsonl").tool_calls
    assert calls[0].result == "def double(x):\n    return x * 3\n"  # cat's recorded output
    assert calls[2].data["recorded_as"] == "shell"  # sed -n 1,5p test_calc.py
    assert "1 passed" in calls[3].result and calls[3].data["answered"] == "jail"
