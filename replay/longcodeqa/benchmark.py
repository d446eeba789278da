"""LongCodeQA-style questions as a benchmark: multiple-choice questions about a repository,
asked at four context-length brackets; ``full`` is the whole repository as text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick
from replay.core.errors import SourceError
from replay.longcodeqa._qarepo import RepoTextBackend
from replay.longcodeqa.qa import QAError, QASet, is_lcb, parse_qa
from replay.longcodeqa.qa_run import ask_brackets

if TYPE_CHECKING:
    from memory.agent import Agent
    from memory.backends import BackendEnv
    from memory.repo import RepoIndex
    from replay.core.runner import Replay


class LongCodeQABenchmark(BaseBenchmark):
    name = "longcodeqa"

    def claims(self, probe: Probe) -> int:
        data = probe.data
        return 2 if (isinstance(data, dict) and data.get("kind") == "qa") or is_lcb(data) else 0

    def load(self, path: Path) -> list[Any]:
        data = Probe(path).data
        try:
            return list(parse_qa(data, path))
        except QAError as exc:
            raise SourceError(str(exc)) from exc

    def owns(self, source: Any) -> bool:
        return isinstance(source, QASet)

    def prepared(self, source: Any) -> bool:
        return True

    def backend(self, name: str, env: BackendEnv, source: Any) -> Any | None:
        return RepoTextBackend(env) if name == "full" else None  # LongCodeBench's baseline

    async def drive(self, replay: Replay, source: QASet, name: str, repo: RepoIndex | None,
                    result: dict[str, Any], tick: Tick) -> Agent:
        agent = replay.agent(source, name, repo)
        result["qa"] = await ask_brackets(agent, source, replay.config.seed,
                                          lambda done, total: tick(done, total + 1))
        return agent


BENCHMARK = LongCodeQABenchmark()
