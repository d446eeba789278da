"""An engram session recorded in-test (the real Agent, the repository tools, the run tool
in the jail, a scripted model) replayed through ``engram replay`` against full and mask:
reads answered from the record, tests run again in the jail, tokens within turns, the
final tests' verdict from the sandbox."""

from __future__ import annotations

import asyncio
import json

import pytest

from memory.acting.jail import bwrap
from memory.acting.tools import grep, listing, read
from memory.transcript import read_transcript
from tests.conftest import git
from tests.replay.agentic.agentic_recording import (
    FIXED,
    QUERIES,
    calc_repo,
    record_session,
    replaying,
    write_spec,
)

jail = pytest.mark.skipif(bwrap.available() is not None,
                          reason=f"no OS jail here, so no test run can be recorded or run "
                                 f"again: {bwrap.available()}")


@pytest.fixture
def live_calls(monkeypatch):
    """Every run of a real read-only tool, by tool and first argument."""
    ran: list[tuple[str, str]] = []
    for module, name in ((read, "read_file"), (grep, "grep"), (listing, "list_files")):
        real = getattr(module, name)

        def counted(root, *args, _real=real, _name=name, **kwargs):
            ran.append((_name, str(args[0]) if args else ""))
            return _real(root, *args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    return ran


def replay_cli(tmp_path, embedder, script, *, fix: bool, live: list | None = None):
    repo = calc_repo(tmp_path / "calc")
    head = git(repo, "rev-parse", "HEAD").strip()
    session = asyncio.run(record_session(repo, tmp_path / "recorded", embedder, script))
    fixed = git(repo, "rev-parse", "HEAD").strip()  # the recorded session's own edit
    assert fixed != head and (repo / "calc.py").read_text() == FIXED
    if live is not None:
        live.clear()  # the recording's own calls ran the real tools
    spec = write_spec(tmp_path / "calc-agentic.json", session, tests=["test_calc.py"],
                      id="calc")
    script.default = replaying(fix)
    script.count_prompt = True  # prompt tokens: the words sent
    from tui.cli import main

    out = tmp_path / "run"
    code = main(["replay", str(spec), "--backends", "full,mask", "--model", "scripted/replay",
                 "--out", str(out), "--max-tokens", "128"])
    assert code == 0
    rows = {r["backend"]: r for r in map(json.loads, (out / "pairs.jsonl").open())}
    assert git(repo, "rev-parse", "HEAD").strip() == fixed  # the developer's repository
    assert (repo / "calc.py").read_text() == FIXED  # is only read
    return rows, out, head


@jail
def test_reads_from_the_record_tests_in_the_jail_and_the_verdict(
        tmp_path, embedder, script, live_calls, capsys):
    rows, out, head = replay_cli(tmp_path, embedder, script, fix=True, live=live_calls)
    assert set(rows) == {"full", "mask"}
    figures = []
    for name, row in rows.items():
        assert row["error"] is None and row["kind"] == "agentic", row["error"]
        agentic = row["agentic"]
        assert agentic["commit"] == head and agentic["commit_recorded"]
        # turn 1: calc.py, grep (record), list_files (live: new), tests (jail);
        # turn 2: test_calc.py (record); turn 3: tests (jail), calc.py (live: edited since)
        assert agentic["answered"] == {"record": 3, "live": 2, "jail": 2, "refused": 0}
        assert agentic["recorded"] == {"read": 3, "test": 2, "edit": 1}
        assert [t["edit"] for t in agentic["turns"]] == ["none", "applied", "none"]
        assert agentic["tests_pass"] and agentic["tests"]["failed"] == []
        assert agentic["tests"]["targets"] == ["test_calc.py"]
        for turn in agentic["turns"]:
            assert turn["step_prompt_tokens"] > 0 and turn["answer_prompt_tokens"] > 0
            assert 0 < turn["peak"] <= turn["limit"]  # within the window in the turn
            assert turn["prompt_tokens"] == turn["step_prompt_tokens"] + \
                turn["answer_prompt_tokens"]
        assert agentic["prompt_tokens_in_turns"] == sum(t["prompt_tokens"]
                                                        for t in agentic["turns"])
        # a failed call (the buggy tests) chains one more step before the answer
        assert [t["steps"] for t in agentic["turns"]] == [5, 1, 2]
        figures.append(f"{name}: in-turn prompt tokens {agentic['prompt_tokens_in_turns']} "
              f"(steps {agentic['step_prompt_tokens']}, answers "
              f"{agentic['answer_prompt_tokens']}) over {len(agentic['turns'])} turns")
        calls = read_transcript(out / "conversations" / f"calc__{name}.jsonl").tool_calls
        how = [(c.function, c.data["answered"]) for c in calls]
        assert how == [("read_file", "record"), ("grep", "record"), ("list_files", "live"),
                       ("run", "jail"), ("read_file", "record"), ("run", "jail"),
                       ("read_file", "live")]
        first_run, second_run = (c for c in calls if c.function == "run")
        assert "assert 6 == 4" in first_run.result and not first_run.ok  # run again, buggy
        assert "1 passed" in second_run.result and second_run.ok  # after the replay's fix
        assert calls[-1].data["why_live"] == "edited since"
        assert "return x * 2" in calls[-1].result
    # no live read ran for what the record held: per pair one list_files and one read of
    # the file the replay edited, nothing else
    assert sorted(live_calls) == sorted([("list_files", ""), ("read_file", "calc.py")] * 2)
    shown = capsys.readouterr().out
    assert "agentic: sessions replayed with their tools" in shown
    print("\n".join(figures))  # after the capture: the figures the docs quote
    results = json.loads((out / "results.json").read_text())
    for name in ("full", "mask"):
        summary = results["agentic"][name]
        assert summary["tests_pass"] == 1.0 and summary["jail"] == 2 and summary["live"] == 2
        assert summary["prompt_tokens_in_turns"] == \
            rows[name]["agentic"]["prompt_tokens_in_turns"] / 3


@jail
def test_a_session_whose_final_tests_fail(tmp_path, embedder, script):
    rows, _, _ = replay_cli(tmp_path, embedder, script, fix=False)
    for row in rows.values():
        agentic = row["agentic"]
        assert row["error"] is None
        assert [t["edit"] for t in agentic["turns"]] == ["none", "none", "none"]
        assert not agentic["tests_pass"]
        assert agentic["tests"]["failed"] == ["test_calc.py::test_double"]
        assert agentic["tests"]["sandbox"] in ("bwrap", "weak")
        assert agentic["answered"]["jail"] == 2
        assert agentic["tests"]["passed_tests"] == 0


@pytest.mark.slow
def test_a_two_turn_session_replayed_by_the_embedded_model(tmp_path, embedder, script):
    """The real local/smollm2 replays two turns of the recorded session against full,
    with its tools; whatever it does, the pair completes and reports."""
    from replay.agentic.source import load_spec
    from replay.core.runner import Replay, ReplayConfig

    repo = calc_repo(tmp_path / "calc")
    session = asyncio.run(record_session(repo, tmp_path / "recorded", embedder, script,
                                         queries=QUERIES[:2]))
    spec = write_spec(tmp_path / "spec.json", session, tests=["test_calc.py"])
    source = load_spec(spec, json.loads(spec.read_text()))
    replay = Replay(ReplayConfig(backends=["full"], model="local/smollm2",
                                 out=tmp_path / "real", max_tokens=64), embedder=embedder)
    try:
        [row] = asyncio.run(replay.run([source]))
    finally:
        replay.close()
    assert row["error"] is None, row["error"]
    agentic = row["agentic"]
    assert len(agentic["turns"]) == 2 and agentic["prompt_tokens_in_turns"] > 0
    assert isinstance(agentic["tests_pass"], bool) and agentic["tests"]["targets"]
    print(f"smollm2 · full: {agentic['steps']} steps, answered {agentic['answered']}, "
          f"in-turn prompt tokens {agentic['prompt_tokens_in_turns']} (steps "
          f"{agentic['step_prompt_tokens']}), tests pass: {agentic['tests_pass']}")
