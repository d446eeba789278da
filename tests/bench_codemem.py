"""Benchmark codemem (not collected by pytest; run it by hand).

    .venv/bin/python -m tests.bench_codemem [--turns 70] [--compare 40] [--real-turns 3]

1. Per-turn overhead excluding LLM time (context + review + observe) at 10, 40, 70
   turns of a scripted code conversation (the scripted model of tests/conftest.py).
2. LLM calls per turn, by purpose.
3. ContextPack tokens of codemem vs full over a scripted 40-turn code conversation.
4. Calls and memory tokens per turn with the real local/smollm2.
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
from memory.types import Turn
from tests.conftest import DB, FORMS, SCRIPT, _register_scripted, make_repo

FUNCTIONS = ["parse_date", "load_config", "send_mail", "retry_call", "render_page"]


def conversation(turns: int) -> list[tuple[str, str]]:
    """(instruction, answer): each function grows a guard per version; every 4th turn is
    a question without code."""
    out = []
    for i in range(turns):
        if i % 4 == 3:
            out.append((f"Question {i}: how does validate_input treat empty values?",
                        "It raises ValueError for an empty value."))
            continue
        name = FUNCTIONS[i % len(FUNCTIONS)]
        version = i // len(FUNCTIONS)
        guards = "".join(f"    if value == {k}:\n        raise ValueError({k})\n"
                         for k in range(version + 1))
        code = f"def {name}(value):\n{guards}    return connect(value)"
        out.append((f"Step {i}: in {name}, also reject the value {version}.",
                    f"```python\n{code}\n```"))
    return out


class Router:
    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.n = 0

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system = messages[0]["content"]
        if system.startswith("You manage the code context"):
            self.n += 1
            return '{"decision": "ADD", "targets": []}' if self.n % 3 == 0 \
                else '{"decision": "KEEP", "targets": []}'
        if system.startswith(("You help a coding assistant", "You keep the change log")):
            return "One sentence about the change."
        if messages[-1]["content"].startswith("Your code for"):
            return "regenerated"
        return self.answers.get(messages[-1]["content"], "ok")


async def overhead(index: RepoIndex, turns: int) -> None:
    _register_scripted()
    convo = conversation(turns)
    SCRIPT.default = Router(dict(convo))
    llm = LLM(LLMConfig(model="scripted/bench"))
    env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, session_id="bench")
    backend = registry.create("codemem", env)
    llm_time = 0.0
    real = llm.complete

    async def timed(*args: Any, **kwargs: Any) -> str:
        nonlocal llm_time
        t = time.perf_counter()
        try:
            return await real(*args, **kwargs)
        finally:
            llm_time += time.perf_counter() - t

    llm.complete = timed  # type: ignore[method-assign]
    costs: list[float] = []
    sizes: list[tuple[int, int]] = []
    for i, (user, answer) in enumerate(convo):
        llm_time = 0.0
        t = time.perf_counter()
        pack = await backend.context(user, budget=6000)
        turn = Turn(i, user, answer)
        await backend.review(turn, pack)
        await backend.observe(turn)
        costs.append((time.perf_counter() - t - llm_time) * 1000)
        sizes.append((len(backend.context_memory), len(backend.session)))
    calls = llm.ledger.get("memory").calls
    for mark in (10, 40, 70):
        if mark <= turns:
            window = costs[mark - 5:mark]
            print(f"codemem at {mark} turns ({sizes[mark - 1][0]} code blocks, "
                  f"{sizes[mark - 1][1]} session blocks): overhead excluding LLM "
                  f"{statistics.mean(window):.0f} ms/turn")
    print(f"codemem: {calls / turns:.2f} memory LLM calls/turn (scripted, {turns} turns)")


async def compare(index: RepoIndex, turns: int) -> None:
    convo = conversation(turns)
    SCRIPT.default = Router(dict(convo))
    totals = {}
    for name in ("full", "codemem"):
        llm = LLM(LLMConfig(model="scripted/bench"))
        env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, session_id=name)
        agent = Agent(registry.create(name, env), llm, env, config=AgentConfig(256))
        tokens = []
        for user, _ in convo:
            await agent.ask(user)
            tokens.append(agent.last_pack.tokens if agent.last_pack else 0)
        totals[name] = tokens
        usage = llm.ledger
        print(f"{name}: context tokens over {turns} turns: total {sum(tokens)}, "
              f"last turn {tokens[-1]}, answer calls {usage.get('answer').calls}, "
              f"memory calls {usage.get('memory').calls}")
    print(f"codemem / full context tokens: {sum(totals['codemem']) / sum(totals['full']):.2f}")


async def real_model(index: RepoIndex, turns: int) -> None:
    llm = LLM(LLMConfig(model="local/smollm2", max_tokens=256))
    env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, session_id="real")
    agent = Agent(registry.create("codemem", env), llm, env, config=AgentConfig(128))
    queries = ["Write a Python function add(a, b) that returns a + b.",
               "Make add reject None arguments with ValueError.",
               "What does connect in app/db.py do?"]
    t = time.perf_counter()
    for q in queries[:turns]:
        await agent.ask(q)
    memory = llm.ledger.get("memory")
    print(f"codemem with local/smollm2, {turns} turns in {time.perf_counter() - t:.0f}s: "
          f"{memory.calls / turns:.1f} memory LLM calls/turn, "
          f"{memory.tokens / turns:.0f} memory tokens/turn, "
          f"{len(agent.backend.session)} session blocks, "
          f"{len(agent.backend.context_memory)} code blocks")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=70)
    parser.add_argument("--compare", type=int, default=40)
    parser.add_argument("--real-turns", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_repo(Path(tmp) / "repo", {"app/forms.py": FORMS, "app/db.py": DB})
        index = RepoIndex(root, Store(Path(tmp) / "index.lance"), get_embedder())
        index.refresh()
        asyncio.run(overhead(index, args.turns))
        asyncio.run(compare(index, args.compare))
        if args.real_turns:
            asyncio.run(real_model(index, args.real_turns))


if __name__ == "__main__":
    main()
