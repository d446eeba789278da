"""Replay drives the Agent on the repository: a re-driven session sees the repository's
project instructions in every context, as the app does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from tests.conftest import DB, FORMS, make_repo

FIXTURE = Path(__file__).parents[2] / "memory" / "fixtures" / "sessions" / "claude-code.jsonl"
RULE = "RULE-7: never call print(); use the logging module."


def test_a_replayed_session_sees_the_repositorys_instructions(tmp_path, script, embedder):
    repo = make_repo(tmp_path / "repo", {"app/forms.py": FORMS, "app/db.py": DB,
                                         "AGENTS.md": RULE + "\n"})
    session = tmp_path / "claude.jsonl"
    session.write_text(FIXTURE.read_text().replace("__REPO__", str(repo)))
    config = ReplayConfig(backends=["rag"], model="scripted/t", out=tmp_path / "run",
                          repo=repo, max_tokens=64)
    replay = Replay(config, embedder=embedder)
    try:
        rows = asyncio.run(replay.run(load_source(session), None))
    finally:
        replay.close()
    assert [r["error"] for r in rows] == [None]
    answers = [m for m in script.calls if m and m[0]["role"] == "system"]
    assert len(answers) >= 4 and all(RULE in m[0]["content"] for m in answers)
    records = [json.loads(line) for p in (tmp_path / "run" / "conversations").iterdir()
               for line in p.read_text().splitlines()]
    turns = [r for r in records if r.get("type") == "turn"]
    assert turns and all({"kind": "instructions", "source": "instructions:AGENTS.md"}.items()
                         <= next(c for c in t["context"] if c["kind"] == "instructions").items()
                         for t in turns)
