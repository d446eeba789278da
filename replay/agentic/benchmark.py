"""Agentic sessions as a benchmark: a recorded session with tool calls (engram, Claude
Code, Codex CLI) replayed against each backend with its reads answered from the record
and its tests run again in the jail; per backend, prompt tokens within turns and whether
the final tests pass. A source is a small ``{"kind": "agentic"}`` JSON file
(``replay.agentic.source``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.agentic._report import AGENTIC_COLUMNS, AGENTIC_LEGEND
from replay.agentic.checkout import has_commit
from replay.agentic.drive import drive_agentic
from replay.agentic.source import KIND, AgenticSession, load_spec
from replay.benchmark import BaseBenchmark, Probe, Tick

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.core.runner import Replay


class AgenticBenchmark(BaseBenchmark):
    name = KIND

    def claims(self, probe: Probe) -> int:
        data = probe.data
        return 2 if isinstance(data, dict) and data.get("kind") == KIND else 0

    def load(self, path: Path) -> list[Any]:
        return [load_spec(path, Probe(path).data)]

    def owns(self, source: Any) -> bool:
        return isinstance(source, AgenticSession)

    def problem(self, replay: Replay, source: AgenticSession) -> str | None:
        """Why the session cannot be replayed at its commit, or None."""
        repo = replay.config.repo or (Path(source.repo) if source.repo else None)
        if repo is None:
            return (f"agentic session {source.id} names no repository; give 'repo' in its "
                    "spec or pass --repo PATH")
        if not (repo / ".git").exists():
            return (f"agentic session {source.id}: {repo} is not a git repository (the "
                    "replay starts from a commit of it); pass --repo PATH")
        if not has_commit(repo, source.commit or "HEAD"):
            return (f"agentic session {source.id}: commit {source.commit or 'HEAD'} is not "
                    f"in {repo}; give the session's 'commit' in its spec, or --repo PATH")
        return None

    async def drive(self, replay: Replay, source: AgenticSession, name: str,
                    repo: RepoIndex | None, result: dict[str, Any], tick: Tick) -> Agent:
        return await drive_agentic(replay, source, name, result, tick)

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        from replay.agentic._report import agentic_rows

        return {"agentic": agentic_rows(pairs)}

    def report(self, summary: dict[str, Any]) -> list[Any]:
        from replay.reporting.report import _table

        if not summary.get("agentic"):
            return []
        return [_table("agentic: sessions replayed with their tools", summary["agentic"],
                       AGENTIC_COLUMNS, caption=AGENTIC_LEGEND)]


BENCHMARK = AgenticBenchmark()
