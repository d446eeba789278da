"""Benchmark mem0 / mem0r (not collected by pytest; run it by hand).

    .venv/bin/python -m tests.bench_mem0 [--turns 70] [--real-turns 4]

1. Per-turn overhead excluding LLM time (store + retrieve), with the scripted
   model from tests/conftest.py answering instantly with valid operations.
2. LLM calls and memory tokens per turn with the real local/smollm2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from memory.backends import BackendEnv, registry
from memory.index.embed import VectorCache, get_embedder
from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from memory.turn.agent import Agent, AgentConfig
from memory.types import Turn
from tests.conftest import DB, FORMS, SCRIPT, _register_scripted, make_repo

TOPICS = ["dates", "logging", "retries", "forms", "database", "caching", "auth", "tests"]


def scripted_replies(i: int) -> list[str]:
    topic = TOPICS[i % len(TOPICS)]
    facts = [{"text": f"Rule {i} about {topic}: use option {i % 5}.",
              "locations": ["app/forms.py::Form.validate_input"]},
             {"text": f"The developer prefers style {i % 3} for {topic}.", "locations": []}]
    ops = [{"fact": 0, "op": "ADD"},
           {"fact": 1, "op": "UPDATE", "memory": 0, "text": facts[1]["text"]} if i % 4 == 3
           else {"fact": 1, "op": "ADD"}]
    return [json.dumps({"facts": facts}), json.dumps({"operations": ops})]


async def overhead(name: str, index: RepoIndex, home: Path, turns: int) -> None:
    _register_scripted()
    llm = LLM(LLMConfig(model="scripted/bench"))
    env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, data_dir=home,
                     session_id=f"bench-{name}")
    backend = registry.create(name, env)
    if hasattr(index.embedder, "cache"):  # the other backend's queries must not be hits
        index.embedder.cache = VectorCache()
    observe_ms: list[float] = []
    context_ms: list[float] = []
    sizes: list[int] = []
    for i in range(turns):
        SCRIPT.queue.extend(scripted_replies(i))
        llm_time = 0.0
        real_complete = llm.complete

        async def timed(*args, _real=real_complete, **kwargs):
            nonlocal llm_time
            t = time.perf_counter()
            try:
                return await _real(*args, **kwargs)
            finally:
                llm_time += time.perf_counter() - t

        llm.complete = timed  # type: ignore[method-assign]
        t = time.perf_counter()
        await backend.observe(Turn(i, f"question {i} about {TOPICS[i % 8]}", "answer"))
        observe_ms.append((time.perf_counter() - t - llm_time) * 1000)
        llm.complete = real_complete  # type: ignore[method-assign]
        t = time.perf_counter()
        await backend.context(f"what did we decide about {TOPICS[i % 8]} in step {i}?",
                              budget=6000)  # unique: no vector-cache hits
        context_ms.append((time.perf_counter() - t) * 1000)
        sizes.append(len(backend.memories))
    for mark in (10, 40, 70):
        if mark <= turns:
            window = slice(mark - 5, mark)
            print(f"{name}: at {mark} turns ({sizes[mark - 1]} memories): "
                  f"observe overhead {statistics.mean(observe_ms[window]):.0f} ms, "
                  f"retrieve {statistics.mean(context_ms[window]):.0f} ms")


async def real_model(name: str, index: RepoIndex, home: Path, turns: int) -> None:
    llm = LLM(LLMConfig(model="local/smollm2", max_tokens=256))
    env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, data_dir=home,
                     session_id=f"real-{name}")
    agent = Agent(registry.create(name, env), llm, env, config=AgentConfig(128))
    queries = ["Store all dates in UTC in app/db.py.",
               "validate_input must reject empty strings.",
               "Use a 10 second timeout in connect.",
               "Actually, store dates in local time."]
    t = time.perf_counter()
    for q in queries[:turns]:
        await agent.ask(q)
    memory = llm.ledger.get("memory")
    print(f"{name} with local/smollm2, {turns} turns in {time.perf_counter() - t:.0f}s: "
          f"{memory.calls / turns:.1f} memory LLM calls/turn, "
          f"{memory.tokens / turns:.0f} memory tokens/turn "
          f"({memory.prompt_tokens / turns:.0f} prompt + "
          f"{memory.completion_tokens / turns:.0f} completion), "
          f"{len(agent.backend.memories)} memories stored")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=70)
    parser.add_argument("--real-turns", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_repo(Path(tmp) / "repo", {"app/forms.py": FORMS, "app/db.py": DB})
        index = RepoIndex(root, Store(Path(tmp) / "index.lance"), get_embedder())
        index.refresh()
        for name in ("mem0", "mem0r"):
            asyncio.run(overhead(name, index, Path(tmp) / "home", args.turns))
        for name in ("mem0", "mem0r"):
            if args.real_turns:
                asyncio.run(real_model(name, index, Path(tmp) / "home", args.real_turns))


if __name__ == "__main__":
    main()
