"""Benchmark the baselines' per-turn overhead (not collected by pytest; run it by hand).

    .venv/bin/python -m tests.bench_baselines [--turns 70] [--backends full,compact,...]

Each turn goes through the Agent (context, MemGPT's tool loop, answer, observe) with
the scripted model from tests/conftest.py answering instantly (valid memory
operations, MemGPT inserting the developer's statement into archival memory); the
time spent inside LLM calls is subtracted, so what remains is the backend's own work
(embedding, LanceDB, bookkeeping). The small-replay triggers are on (compact every 10
turns, LD-Agent sessions of 10 turns, MemGPT's main context at 1,500 tokens), so
compaction, session closing and eviction happen within the run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.backends import BackendEnv, registry
from memory.index.embed import get_embedder
from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from memory.turn.agent import Agent, AgentConfig
from tests.asked import asked
from tests.conftest import DB, FORMS, SCRIPT, _register_scripted, make_repo
from tests.memory.recall.test_rebuilt import reply as memory_reply

TOPICS = ["dates", "logging", "retries", "forms", "database", "caching", "auth", "tests"]
OPTIONS = {"compact_turns": 10, "ldagent_session_turns": 10, "memgpt_window": 1500}


def reply(messages: list[dict[str, Any]]) -> str:
    import json

    request = asked(messages)
    last = request.query
    if request.step:
        if "Function call archival_memory_insert" in request.calls or "Rule" not in last:
            return json.dumps({"call": {"function": "answer"}})
        return json.dumps({"call": {"function": "archival_memory_insert", "content": last,
                                    "request_heartbeat": False}})
    return memory_reply(messages)


async def overhead(name: str, index: RepoIndex, home: Path, turns: int) -> dict[int, float]:
    _register_scripted()
    SCRIPT.default = reply
    llm = LLM(LLMConfig(model="scripted/bench"))
    env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, data_dir=home,
                     session_id=f"bench-{name}", options=dict(OPTIONS))
    agent = Agent(registry.create(name, env), llm, env, config=AgentConfig(128))
    llm_time = 0.0
    complete, stream = llm.complete, llm.stream

    async def timed(real: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal llm_time
        t = time.perf_counter()
        try:
            return await real(*args, **kwargs)
        finally:
            llm_time += time.perf_counter() - t

    llm.complete = lambda *a, **k: timed(complete, *a, **k)  # type: ignore[method-assign]
    llm.stream = lambda *a, **k: timed(stream, *a, **k)  # type: ignore[method-assign]
    per_turn: list[float] = []
    for i in range(turns):
        topic = TOPICS[i % len(TOPICS)]
        llm_time = 0.0
        t = time.perf_counter()
        await agent.ask(f"Rule {i} about {topic}: use option {i % 5} in app/forms.py.")
        per_turn.append((time.perf_counter() - t - llm_time) * 1000)
    return {mark: statistics.mean(per_turn[mark - 5:mark]) for mark in (10, 40, 70)
            if mark <= turns}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=70)
    parser.add_argument("--backends", default="full,compact,mask,amem,ldagent,memgpt")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_repo(Path(tmp) / "repo", {"app/forms.py": FORMS, "app/db.py": DB})
        index = RepoIndex(root, Store(Path(tmp) / "index.lance"), get_embedder())
        index.refresh()
        print(f"per-turn overhead, LLM time excluded (mean of the 5 turns before each mark); "
              f"options {OPTIONS}")
        for name in args.backends.split(","):
            marks = asyncio.run(overhead(name, index, Path(tmp) / "home", args.turns))
            print(f"{name:8} " + "  ".join(f"{m} turns: {ms:5.0f} ms" for m, ms in marks.items()))


if __name__ == "__main__":
    main()
