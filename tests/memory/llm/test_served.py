"""engram through a real self-hosted server: llama-cpp-python's OpenAI-compatible server
serving the shipped SmolLM2 on loopback (the ``llama_server`` fixture). Memory must work
through it as it does embedded: the structured mode steps down to the one the server
takes (llama.cpp's json_object with a schema) and decodes under the schema there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memory.llm import structured
from memory.transcript import read_transcript
from tests.served import STATEMENTS
from tui.cli import main

pytestmark = [pytest.mark.server, pytest.mark.slow]


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    """A fresh user cache per test (each learns the server's mode itself); the CLI's
    ``--api-base`` / ``--structured`` settings do not outlive the test."""
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    for var in ("ENGRAM_API_BASE", "ENGRAM_STRUCTURED", "ENGRAM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    structured._memo.clear()
    yield
    structured._memo.clear()


def served_args(server, data: Path) -> list[str]:
    return ["--model", server.model, "--api-base", server.base, "--data-dir", str(data)]


def test_ask_answers_through_the_server(llama_server, demo_repo, tmp_path, capsys):
    code = main(["ask", "What does connect in app/db.py return?", "--repo", str(demo_repo),
                 "--backend", "rag", "--max-tokens", "40",
                 *served_args(llama_server, tmp_path / "data")])
    out = capsys.readouterr().out
    assert code == 0 and out.strip()


@pytest.mark.parametrize("backend", ["mem0", "mem0r"])
def test_six_turn_chat_stores_memories_through_the_server(
        llama_server, demo_repo, tmp_path, capsys, monkeypatch, backend):
    monkeypatch.setattr(sys, "stdin", iter(line + "\n" for line in STATEMENTS))
    data = tmp_path / "data"
    code = main(["chat", "--headless", "--repo", str(demo_repo), "--backend", backend,
                 "--max-tokens", "32", *served_args(llama_server, data)])
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    (path,) = data.glob("repos/*/sessions/*.jsonl")
    memory = read_transcript(path).of_type("memory")
    ops = [r["op"] for r in memory]
    print(backend, ops, [line for line in err.splitlines() if "structured" in line])
    assert [r for r in memory if r["op"] in ("skipped", "error")] == []
    assert ops.count("ADD") - ops.count("DELETE") >= 3
    # the mode used is shown: json_schema refused once, llama.cpp's form took every call
    assert "via schema_object" in err and "1 refused" in err and "skipped 0" in err
    (learned,) = structured.learned_modes().values()
    assert learned["mode"] == "schema_object" and learned["api_base"] == llama_server.base


async def test_memgpt_tool_loop_turn_through_the_server(llama_server, make_agent):
    from memory.backends import registry

    agent = make_agent("full", model=llama_server.model, api_base=llama_server.base,
                       max_answer_tokens=24)
    agent.env.options["memgpt_window"] = 700
    agent.backend = registry.create("memgpt", agent.env)
    turn = await agent.ask("parse_date in app/dates.py must return UTC datetimes.")
    assert turn.ok and turn.assistant
    assert turn.meta["tools"], "no step of the tool loop was recorded"
    records = read_transcript(agent.transcript.path).of_type("memory")
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    stats = agent.llm.stats
    assert stats.schema_object >= 1 and stats.failed == 0 and stats.refused == 1


async def test_cards_llm_scorer_judges_through_the_server(llama_server, embedder, repo_index,
                                                          tmp_path):
    from memory.backends import BackendEnv, registry
    from memory.backends.cards.score import Candidate, LLMScorer
    from memory.llm.client import LLM, LLMConfig
    from memory.types import Turn

    llm = LLM(LLMConfig(model=llama_server.model, api_base=llama_server.base))
    env = BackendEnv(llm=llm, embedder=embedder, repo=repo_index, data_dir=tmp_path / "home",
                     session_id="s1", options={"cards_scorer": "llm"})
    cards = registry.create("cards", env)
    assert isinstance(cards.scorer, LLMScorer)
    for i, text in enumerate(STATEMENTS[:2]):
        await cards.observe(Turn(i, text, "Noted."))
    facts = cards.graph.of_type("fact")
    assert facts
    got = await cards.scorer.judge("what timeout does connect use?",
                                   [Candidate(node, 0.5, 0.0) for node in facts[:2]])
    assert got and all(j.scorer == "llm" for j in got) and cards.scorer.fallbacks == 0
    assert llm.stats.schema_object >= len(got) and llm.stats.failed == 0
