"""SWE-ContextBench-style chains as a benchmark: experience tasks first, then the related
tasks under each setting (no experience, summaries, the memory backend's own). Chains are
built from a repository's target functions (``build``)."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, BuildRequest, Probe, Tick, options_of
from replay.core.errors import SourceError
from replay.core.window import answer_llm
from replay.sandbox.sandbox import mode as sandbox_mode
from replay.swecontext._experience_report import (
    EXPERIENCE_COLUMNS,
    EXPERIENCE_LEGEND,
)
from replay.swecontext.experience import (
    SETTINGS,
    ExperienceError,
    ExperienceSet,
    parse_experience,
)
from replay.swecontext.experience_run import run_experience_tasks, run_settings

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex
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

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("SWE-ContextBench task chains")
        group.add_argument("--experience-settings", default=None, metavar="A,B",
                           help="task-chain sources: which of SWE-ContextBench's settings to "
                                "run (none, free, oracle, free-summary, oracle-summary; "
                                "default all)")

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        from replay.swecontext.experience_run import check_settings

        given = args.experience_settings
        chosen = check_settings([s.strip() for s in given.split(",") if s.strip()]) \
            if given else SETTINGS
        return {"settings": list(chosen)}

    def prepared(self, source: Any) -> bool:
        return True

    def targets(self, source: ExperienceSet) -> list[Any]:
        return [(t.path, t.function, t.tests) for t in (*source.experience, *source.related)]

    def copy_repository(self, repo: Path, source: Any, dest: Path) -> None:
        from replay.locoeval.prepare import prepared_copy

        prepared_copy(repo, self.targets(source), dest)  # without every chain's targets

    async def drive(self, replay: Replay, source: ExperienceSet, name: str,
                    repo: RepoIndex | None, result: dict[str, Any], tick: Tick) -> None:
        """Experience tasks, then the related tasks under each setting; one ledger for the
        pair's answers and memory operations, the summaries' tokens apart."""
        config = replay.config
        given = options_of(config, self.name).get("settings")
        chosen = SETTINGS if given is None else tuple(given)
        llm = answer_llm(config.model, config.window)
        summary_llm = answer_llm(config.model, config.window)
        total = len(source.experience) + len(source.related) * len(chosen)
        ticks = iter(range(1, total + 1))
        original = replay.outline_repo(source)
        try:
            done = await run_experience_tasks(
                source, lambda part: replay.agent(source, name, repo, llm=llm, part=part),
                summary_llm, original, config.limits)
            tick(len(source.experience), total)
            settings = await run_settings(
                source, chosen,
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

    def build(self, request: BuildRequest) -> list[str]:
        """One chain file in ``request.out`` from ``request.targets``: a target calling
        another, or sharing an uncommon dependency with it, is its related task."""
        from replay.locoeval.build import load_targets
        from replay.swecontext.experience_build import as_json, build_chains

        if request.targets is None:
            raise ValueError("--targets is required to build task chains")
        targets = load_targets(request.targets)
        request.out.mkdir(parents=True, exist_ok=True)
        ref = os.path.relpath(request.repo.resolve(), request.out.resolve())
        chains = build_chains(request.repo, targets, ref)
        path = request.out / f"{chains.id}.json"
        path.write_text(json.dumps(as_json(chains), indent=2) + "\n")
        return [f"{len(chains.experience)} experience tasks, {len(chains.related)} related "
                f"tasks: {path}"]

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        from replay.swecontext._experience_report import experience_rows

        return {"experience": experience_rows(pairs)}

    def report(self, summary: dict[str, Any]) -> list[Any]:
        from replay.reporting.report import _table

        if not summary.get("experience"):
            return []
        return [_table("experience: related tasks by setting", summary["experience"],
                       EXPERIENCE_COLUMNS, first="backend · setting",
                       caption=EXPERIENCE_LEGEND)]


BENCHMARK = SWEContextBenchmark()
