"""Recorded sessions as a benchmark: each user turn asked again, nothing scored but what
every pair reports (tokens, turns, cost)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick
from replay.sessions.foreign import sniff
from replay.sessions.source import Recorded, load_foreign, load_recorded

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.core.runner import Replay


class SessionsBenchmark(BaseBenchmark):
    name = "sessions"

    def claims(self, probe: Probe) -> int:
        if probe.is_dir:
            return 0
        if sniff(probe.path) is not None:  # another tool's session: surely
            return 2
        return 1 if probe.suffix == ".jsonl" else 0  # else an engram transcript, maybe

    def load(self, path: Path) -> list[Any]:
        tool = sniff(path)
        return [load_foreign(path, tool) if tool is not None else load_recorded(path)]

    def owns(self, source: Any) -> bool:
        return isinstance(source, Recorded)

    def problem(self, replay: Replay, source: Recorded) -> str | None:
        """Why a session cannot be re-driven with its repository, or None. A session
        recorded without one (app sessions before the session record named it) is never
        replayed silently without code."""
        if replay.config.repo is not None:
            return None
        if not source.repo:
            return (f"session {source.id} does not record its repository (recorded before "
                    "engram wrote it in the session record); pass --repo PATH, the "
                    "repository it was about")
        if not Path(source.repo).is_dir():
            return (f"session {source.id}: its repository {source.repo} is not there any "
                    "more; pass --repo PATH")
        return None

    async def drive(self, replay: Replay, source: Recorded, name: str,
                    repo: RepoIndex | None, result: dict[str, Any], tick: Tick) -> Agent:
        path = replay.config.repo or (Path(source.repo) if source.repo else None)
        if path is not None and path.is_dir():  # the repository as it is, indexed
            async with replay.lock:
                repo = await asyncio.to_thread(replay.plain_index, path)
        agent = replay.agent(source, name, repo)
        result["origin"], result["skipped_records"] = source.origin, source.skipped
        for n, query in enumerate(source.queries):
            await agent.ask(query)
            tick(n + 1, len(source.queries) + 1)
        return agent


BENCHMARK = SessionsBenchmark()
