"""A run's files through fsspec: a local folder or an object store (fsspec's memory://)."""

from __future__ import annotations

import json

import fsspec
import pytest

from replay.core.output import Output, OutputError, PairLog
from tests.replay.conftest import perfect_reply


@pytest.fixture
def memfs():
    fs = fsspec.filesystem("memory")
    yield fs
    fs.store.clear()
    fs.pseudo_dirs.clear()
    fs.pseudo_dirs.append("")


def test_pairs_log_on_an_object_store_has_no_append_and_keeps_torn_lines_apart(memfs):
    output = Output("memory://runs/a")
    log = PairLog(output)
    log.append({"source": "s", "backend": "full", "error": None})
    memfs.pipe("/runs/a/pairs.jsonl", memfs.cat("/runs/a/pairs.jsonl") + b'{"source": "s", "ba')
    log.append({"source": "s", "backend": "rag", "error": None})
    log.append({"source": "s", "backend": "empty", "error": "boom"})
    assert log.finished() == {("s", "full"), ("s", "rag")}
    assert len(memfs.cat("/runs/a/pairs.jsonl").decode().splitlines()) == 4


def test_local_append_ends_a_torn_line_first(tmp_path):
    output = Output(tmp_path / "run")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "pairs.jsonl").write_text('{"source": "s", "backend": "full"')
    PairLog(output).append({"source": "s", "backend": "rag", "error": None})
    assert PairLog(output).finished() == {("s", "rag")}


def test_an_unknown_protocol_is_a_clear_error():
    with pytest.raises(OutputError, match="nosuchproto://x"):
        Output("nosuchproto://x")


def test_cli_writes_a_whole_run_to_an_object_store_and_resumes_there(
        tmp_path, outline_file, script, memfs, capsys):
    from tui.cli import main

    script.default = perfect_reply
    args = ["replay", str(outline_file), "--backends", "empty", "--model", "scripted/t",
            "--out", "memory://runs/shop", "--max-tokens", "128", "--mock-user", "template"]
    assert main(args) == 0
    files = {p.removeprefix("/runs/shop/") for p in memfs.find("/runs/shop")}
    assert files == {"pairs.jsonl", "results.json", "chart.png",
                     "conversations/shop-2__empty.jsonl"}
    turns = [json.loads(line) for line in
             memfs.cat("/runs/shop/conversations/shop-2__empty.jsonl").decode().splitlines()]
    assert sum(1 for t in turns if t["type"] == "turn") == 7
    printed = capsys.readouterr().err.replace("\n", "")
    assert "memory:///runs/shop/results.json" in printed
    calls = len(script.calls)
    assert main([*args[:3], "empty,full", *args[4:], "--resume"]) == 0
    assert len(script.calls) - calls == 7 + 5  # only full ran
    results = json.loads(memfs.cat("/runs/shop/results.json"))
    assert set(results["backends"]) == {"empty", "full"}
    assert not (tmp_path / "memory:").exists()  # nothing landed in a local folder
