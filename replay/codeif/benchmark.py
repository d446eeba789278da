"""CodeIF-Bench-style iterative instructions as a benchmark: each instruction answered in
one conversation, each answer graded by the tests its turn is graded with."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick
from replay.codeif._codeif import IterativeOptions
from replay.codeif._turn_report import iterative_tables
from replay.codeif.drive import iterate
from replay.codeif.source import Iterative, load_iterative
from replay.sandbox.sandbox import mode as sandbox_mode

if TYPE_CHECKING:
    from memory.agent import Agent
    from memory.repo import RepoIndex
    from replay.core.runner import Replay


class CodeIFBenchmark(BaseBenchmark):
    name = "codeif"

    def claims(self, probe: Probe) -> int:
        head = probe.head
        if isinstance(head, dict) and "prompt" in head and "multi-turn" in head:
            return 2  # CodeIF-Bench's JSONL
        data = probe.data
        # our {"tasks": [...]} (or a bare list): only when no other benchmark is sure
        return 1 if (isinstance(data, dict) and "tasks" in data) or isinstance(data, list) else 0

    def load(self, path: Path) -> list[Any]:
        return list(load_iterative(path))

    def owns(self, source: Any) -> bool:
        return isinstance(source, Iterative)

    async def drive(self, replay: Replay, source: Iterative, name: str,
                    repo: RepoIndex | None, result: dict[str, Any], tick: Tick) -> Agent:
        agent = replay.agent(source, name, repo)
        config = replay.config
        options = config.iterative or IterativeOptions()  # how its turns are graded
        result["iterative"] = await iterate(agent, source, config.samples,
                                            config.iterative_limits, options, tick)
        result["sandbox"] = sandbox_mode()  # "bwrap", or "weak" where it fell back
        return agent

    def report(self, summary: dict[str, Any]) -> list[Any]:
        return iterative_tables(summary.get("iterative") or {})


BENCHMARK = CodeIFBenchmark()
