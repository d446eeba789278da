"""One replay pair through a real self-hosted server (llama-cpp-python's OpenAI-compatible
server serving the shipped SmolLM2 on loopback): ``engram replay --api-base``."""

from __future__ import annotations

import json

import pytest

from memory.llm import structured

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_a_mem0_pair_replays_through_the_server(llama_server, outline_file, tmp_path,
                                                 monkeypatch):
    from tui.cli import main

    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    for var in ("ENGRAM_API_BASE", "ENGRAM_STRUCTURED"):
        monkeypatch.delenv(var, raising=False)  # restored after: the CLI sets them
    structured._memo.clear()
    out = tmp_path / "run"
    code = main(["replay", str(outline_file), "--backends", "mem0", "--model",
                 llama_server.model, "--api-base", llama_server.base, "--mock-user",
                 "template", "--out", str(out), "--max-tokens", "24",
                 "--test-timeout", "30"])
    results = json.loads((out / "results.json").read_text())
    row = results["backends"]["mem0"]
    assert code == 0 and row["errors"] == 0
    assert row["tokens"] > 0 and row["mem_skips"] == 0
    assert row["structured"]["calls"] > 0 and row["structured"]["failed"] == 0
    (learned,) = structured.learned_modes().values()
    assert learned["mode"] == "schema_object" and learned["api_base"] == llama_server.base
    structured._memo.clear()
