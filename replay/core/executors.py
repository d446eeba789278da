"""Who runs a run's (source, backend) pairs: this process, or Ray tasks on a cluster.

Both executors share the driver loop (``drive``): pairs are launched in order while
fewer than ``--concurrency`` are in flight and ``--budget-usd`` allows the next one;
each finished pair is published to the output by the driver (transcript, then its
line in ``pairs.jsonl``), so a run killed at any point resumes with either executor.
The local executor is the default and the reference; Ray is an optional extra
(``pip install 'engram[ray]'``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from replay.core.cost import Budget, row_cost
from replay.core.sources import source_id

if TYPE_CHECKING:
    from replay.core.runner import Replay
    from replay.core.sources import Source

Pair = tuple["Source", str]
Launch = Callable[["Source", str], Awaitable[dict[str, Any]]]


class ExecutorError(RuntimeError):
    """An executor that cannot start (Ray missing, cluster unreachable)."""


class Executor(Protocol):
    async def run(self, replay: Replay, todo: list[Pair], budget: Budget) -> None: ...


async def drive(replay: Replay, todo: list[Pair], budget: Budget, launch: Launch,
                concurrency: int) -> None:
    """Launch ``todo`` in order, at most ``concurrency`` at once, while the budget allows."""
    slots = asyncio.Semaphore(max(1, concurrency))
    running: set[asyncio.Task[None]] = set()

    async def one(source: Source, name: str, launched: int) -> None:
        try:
            row = await launch(source, name)
            budget.finish(name, row_cost(row), launched)
        finally:
            slots.release()

    for source, name in todo:
        await slots.acquire()
        launched = budget.start(source_id(source), name)
        if launched is None:
            slots.release()
            continue
        task = asyncio.create_task(one(source, name, launched))
        running.add(task)
        task.add_done_callback(running.discard)
    if running:
        await asyncio.gather(*list(running))


@dataclass
class LocalExecutor:
    """Pairs as asyncio tasks of this process (one CPU budget, one LLM rate limiter)."""

    async def run(self, replay: Replay, todo: list[Pair], budget: Budget) -> None:
        from memory.llm.client import set_rate_gate
        from replay.core.ratelimit import RateLimiter

        limits = replay.config.rate_limits
        if limits:
            set_rate_gate(RateLimiter(limits).wait)

        async def launch(source: Source, name: str) -> dict[str, Any]:
            row = await replay.run_pair(source, name)
            replay.publish(row)
            return row

        try:
            await drive(replay, todo, budget, launch, replay.config.concurrency)
        finally:
            if limits:
                set_rate_gate(None)
