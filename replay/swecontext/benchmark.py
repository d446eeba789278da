"""SWE-ContextBench-style chains as a benchmark: experience tasks first, then the related
tasks under each setting (no experience, summaries, the memory backend's own)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick
from replay.core.errors import SourceError
from replay.core.window import answer_llm
from replay.sandbox.sandbox import mode as sandbox_mode
from replay.swecontext._experience_report import (
    EXPERIENCE_COLUMNS,
    EXPERIENCE_LEGEND,
)
from replay.swecontext.experience import ExperienceError, ExperienceSet, parse_experience
from replay.swecontext.experience_run import run_experience_tasks, run_settings

if TYPE_CHECKING:
    from memory.repo import RepoIndex
    from replay.core.runner import Replay

log = logging.getLogger("replay.core.runner")  # where a failed pair was logged before


class SWEContextBenchmark(BaseBenchmark):
    name = "swecontext"
    whole_row = True  # several conversations per pair: drive writes the whole row

    def claims(self, probe: Probe) -> int:
        data = probe.data
        return 2 if isinstance(data, dict) and data.get("kind") == "experience" else 0

    def load(self, path: Path) -> list[Any]:
        try:
            return [parse_experience(Probe(path).data, path)]
        except ExperienceError as exc:
            raise SourceError(str(exc)) from exc

    def owns(self, source: Any) -> bool:
        return isinstance(source, ExperienceSet)

    def prepared(self, source: Any) -> bool:
        return True

    def targets(self, source: ExperienceSet) -> list[Any]:
        return [(t.path, t.function, t.tests) for t in (*source.experience, *source.related)]

    async def drive(self, replay: Replay, source: ExperienceSet, name: str,
                    repo: RepoIndex | None, result: dict[str, Any], tick: Tick) -> None:
        """Experience tasks, then the related tasks under each setting; one ledger for the
        pair's answers and memory operations, the summaries' tokens apart."""
        config = replay.config
        llm = answer_llm(config.model, config.window)
        summary_llm = answer_llm(config.model, config.window)
        total = len(source.experience) + len(source.related) * len(config.experience_settings)
        ticks = iter(range(1, total + 1))
        original = replay.outline_repo(source)
        try:
            done = await run_experience_tasks(
                source, lambda part: replay.agent(source, name, repo, llm=llm, part=part),
                summary_llm, original, config.limits)
            tick(len(source.experience), total)
            settings = await run_settings(
                source, config.experience_settings,
                lambda part: replay.agent(source, name, repo, llm=llm, part=part), done,
                original, config.limits,
                lambda: tick(len(source.experience) + next(ticks), total))
            result["experience"] = {"settings": settings, "experience_tasks": done.graded,
                                    "summaries": done.summaries,
                                    "summary_tokens": summary_llm.ledger.tokens}
            result["sandbox"] = sandbox_mode()
        except Exception as exc:  # one pair failing must not end the run
            log.exception("replay pair %s · %s failed", result.get("source"), name)
            result["error"] = f"{type(exc).__name__}: {exc}"
        result["tokens"] = llm.ledger.tokens
        result["usage"] = llm.ledger.to_dict()
        return None

    def report(self, summary: dict[str, Any]) -> list[Any]:
        from replay.reporting.report import _table

        if not summary.get("experience"):
            return []
        return [_table("experience: related tasks by setting", summary["experience"],
                       EXPERIENCE_COLUMNS, first="backend · setting",
                       caption=EXPERIENCE_LEGEND)]


BENCHMARK = SWEContextBenchmark()
