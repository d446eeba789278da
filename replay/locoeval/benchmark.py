"""LoCoEval-style outlines as a benchmark: a mock user voices the outline's queries, then
the tasks (topics, item extraction, function generation) are asked and scored; the
oracle backend hands the agent exactly the outline's true items."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick
from replay.core.errors import SourceError
from replay.core.sources import source_id
from replay.locoeval.drive import converse
from replay.locoeval.judge import LLMJudge, judge_accuracy
from replay.locoeval.matcher import TaskPacks
from replay.locoeval.oracle import OracleBackend
from replay.locoeval.outline import Outline, OutlineError, load_outlines
from replay.locoeval.tasks import as_dict, outline_tasks
from replay.sandbox.sandbox import mode as sandbox_mode

if TYPE_CHECKING:
    from memory.agent import Agent
    from memory.backends import BackendEnv
    from memory.repo import RepoIndex
    from replay.core.runner import Replay


class LoCoEvalBenchmark(BaseBenchmark):
    name = "locoeval"

    def claims(self, probe: Probe) -> int:
        if probe.is_dir:
            return 2  # a folder of outlines
        data = probe.data
        return 2 if isinstance(data, dict) and "samples" in data and "topics" in data else 0

    def load(self, path: Path) -> list[Any]:
        if path.is_dir():
            return list(load_outlines(path))
        try:
            return list(load_outlines(path))
        except OutlineError as exc:
            raise SourceError(str(exc)) from exc

    def owns(self, source: Any) -> bool:
        return isinstance(source, Outline)

    def kind(self, source: Any) -> str:
        return "outline"

    def prepared(self, source: Any) -> bool:
        return True

    def targets(self, source: Outline) -> list[Any]:
        return [(s.path, s.function, s.tests) for s in source.samples]

    def backend(self, name: str, env: BackendEnv, source: Any) -> Any | None:
        return OracleBackend(env, source) if name == "oracle" else None

    async def drive(self, replay: Replay, source: Outline, name: str, repo: RepoIndex | None,
                    result: dict[str, Any], tick: Tick) -> Agent:
        config = replay.config
        agent = replay.agent(source, name, repo)
        await converse(agent, source, repo, config, replay.embedder, result, tick)
        judge = replay.judge().for_outline(source)  # knows each unit's distractors
        packs = TaskPacks(agent)
        scores = await outline_tasks(agent, source, judge, replay.outline_repo(source),
                                     config.limits, config.samples)
        result["scores"] = as_dict(scores)
        # reader-free context metrics by the judge's matcher, exact-text ones beside
        for key, value in packs.metrics(replay.embed_judge.matcher, source).items():
            result["scores"][f"{key}_exact"] = result["scores"].get(key)
            result["scores"][key] = value
        result["subset"], result["k"] = source.subset, len(source.samples)
        result["l"] = len(source.queries())  # LoCoEval's conversation length
        checks = replay.judge_checks
        if source_id(source) not in checks:
            checks[source_id(source)] = await judge_accuracy(judge, source)
        result["judge_check"] = checks[source_id(source)]
        if isinstance(judge, LLMJudge):
            result["judge_tokens"] = judge.llm.ledger.tokens
            result["judge_usage"] = judge.llm.ledger.to_dict()
            result["judge_fallbacks"] = judge.fallbacks
            result["judge_stats"] = judge.stats()
        if source.tasks.generate:
            result["sandbox"] = sandbox_mode()  # "bwrap", or "weak" where it fell back
        return agent


BENCHMARK = LoCoEvalBenchmark()
