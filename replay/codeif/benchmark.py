"""CodeIF-Bench-style iterative instructions as a benchmark: each instruction answered in
one conversation, each answer graded by the tests its turn is graded with."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick, options_of
from replay.codeif._codeif import IterativeOptions
from replay.codeif._turn_report import iterative_summary, iterative_tables
from replay.codeif.drive import iterate
from replay.codeif.source import Iterative, load_iterative
from replay.sandbox.sandbox import Limits
from replay.sandbox.sandbox import mode as sandbox_mode

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.core.runner import Replay


TEST_TIMEOUT = 10.0  # seconds per turn's test run (--test-timeout sets every benchmark's)


class CodeIFBenchmark(BaseBenchmark):
    name = "codeif"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("CodeIF-Bench iterative tasks")
        group.add_argument("--iterative-mode", choices=["all", "category", "cumulative"],
                           default="all",
                           help="tests grading an iterative turn: all (every test so far), or "
                                "CodeIF-Bench's category / cumulative modes")
        group.add_argument("--code-prep", choices=["engram", "codeif"], default="engram",
                           help="code taken from an iterative answer: engram (every fenced "
                                "block) or codeif (the benchmark's: first ```python block, "
                                "indented docstrings and blank lines stripped)")

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        IterativeOptions(args.iterative_mode, args.code_prep)  # checked here
        return {"mode": args.iterative_mode, "prepare": args.code_prep,
                "test_timeout": args.test_timeout or TEST_TIMEOUT}

    def commands(self) -> dict[str, Callable[[list[str]], int]]:
        from replay.codeif.score import main as score

        return {"score": score}  # answers produced elsewhere, graded without any model

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
        given = options_of(config, self.name)
        options = IterativeOptions(given.get("mode", "all"),  # how its turns are graded
                                   given.get("prepare", "engram"))
        limits = Limits(timeout=float(given.get("test_timeout", TEST_TIMEOUT)))
        result["iterative"] = await iterate(agent, source, config.samples, limits, options,
                                            tick)
        result["sandbox"] = sandbox_mode()  # "bwrap", or "weak" where it fell back
        return agent

    columns = (("IA ↑", "ia", 2), ("CA ↑", "ca", 2), ("IFR ↓", "ifr", 2))

    def scores(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """IA, CA, IFR pooled over the backend's turns (nothing is forgotten at the first
        turn: its IFR is left out)."""
        ia, ca, ifr = [], [], []
        for row in rows:
            it = row.get("iterative") or {}
            ia += it.get("ia", [])
            ca += it.get("ca", [])
            ifr += it.get("ifr", [])[1:]
        return {"ia": _mean(ia), "ca": _mean(ca), "ifr": _mean(ifr)}

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        return {"iterative": iterative_summary(pairs)}

    def report(self, summary: dict[str, Any]) -> list[Any]:
        return iterative_tables(summary.get("iterative") or {})


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


BENCHMARK = CodeIFBenchmark()
