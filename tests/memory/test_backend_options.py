from __future__ import annotations

import json
import sys

import pytest

from memory.backends.compact import SUMMARY_PROMPT
from memory.backends.options import OPTIONS, BackendOptionError, parse_options
from memory.transcript import read_transcript
from tui.cli import main


def test_options_are_typed():
    assert parse_options(["compact_turns=6", "compact_share=0.5", "shared_memory=yes",
                          "memgpt_window = 2000"]) == {
        "compact_turns": 6, "compact_share": 0.5, "shared_memory": True, "memgpt_window": 2000}


@pytest.mark.parametrize("pair, message", [
    ("compact_turn=6", "unknown backend option 'compact_turn'; known: shared_memory"),
    ("compact_turns", "expected key=value"),
    ("compact_turns=six", "'six' is not an integer"),
    ("memgpt_warning=high", "'high' is not a number"),
    ("mask_keep=-1", "is negative"),
    ("shared_memory=maybe", "is not true or false"),
])
def test_a_bad_option_is_a_clear_error(pair, message):
    with pytest.raises(BackendOptionError, match=message.replace("(", r"\(")):
        parse_options([pair])


def test_a_third_party_backend_takes_options_under_its_name():
    assert parse_options(["echo_depth=3"], ["full", "echo"]) == {"echo_depth": "3"}
    with pytest.raises(BackendOptionError):
        parse_options(["echo_depth=3"], ["full"])


def test_every_option_is_read_by_a_backend():
    from pathlib import Path

    sources = "".join(p.read_text() for p in Path("memory/backends").rglob("*.py")
                      if p.name != "options.py")
    for key in OPTIONS:
        assert f'"{key}"' in sources, key


def test_chat_passes_backend_options_to_the_backend(demo_repo, tmp_path, script, monkeypatch,
                                                    capsys):
    def reply(messages):
        if SUMMARY_PROMPT[:60] in str(messages):
            return json.dumps({"requirements": ["question 0"], "decisions": [], "revisions": [],
                               "open_errors": [], "code_written": []})
        return "echo: " + messages[-1]["content"][:40]

    script.default = reply
    monkeypatch.setattr(sys, "stdin", iter([f"question {i}\n" for i in range(4)]))
    data = tmp_path / "data"
    code = main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "compact", "--backend-opt", "compact_turns=2",
                 "--backend-opt", "compact_keep_first=1", "--data-dir", str(data)])
    assert code == 0
    [session] = list(data.glob("repos/*/sessions/*.jsonl"))
    ops = [r["op"] for r in read_transcript(session).of_type("memory")]
    assert "SUMMARIZE" in ops  # compact_turns=2 triggered a compaction within 4 turns


def test_an_unknown_option_stops_ask_and_replay_before_anything_runs(demo_repo, tmp_path,
                                                                     capsys):
    from replay.cli.command import main as replay_main

    code = main(["ask", "hi", "--repo", str(demo_repo), "--backend-opt", "nope=1",
                 "--data-dir", str(tmp_path / "d")])
    assert code == 2 and "unknown backend option 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    code = replay_main([str(tmp_path / "none.json"), "--backend-opt", "compact_turns=x",
                        "--out", str(tmp_path / "run")])
    assert code == 2 and "'x' is not an integer" in capsys.readouterr().err

