"""LoCoEval-style outlines as a benchmark: a mock user voices the outline's queries, then
the tasks (topics, item extraction, function generation) are asked and scored; the
oracle backend hands the agent exactly the outline's true items. Outlines are built
from a repository's target functions (``build``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, BuildRequest, Probe, Tick
from replay.core.errors import SourceError
from replay.core.sources import source_id
from replay.locoeval import report as _report
from replay.locoeval.drive import converse
from replay.locoeval.judge import THRESHOLD, EmbedJudge, LLMJudge, judge_accuracy
from replay.locoeval.matcher import TaskPacks
from replay.locoeval.options import LocoevalOptions
from replay.locoeval.oracle import OracleBackend
from replay.locoeval.outline import Outline, OutlineError, load_outlines
from replay.locoeval.prepare import prepared_copy
from replay.locoeval.tasks import Verdicts, as_dict, outline_tasks
from replay.locoeval.voice import Voice, VoiceError, voice_of, voiced
from replay.sandbox.sandbox import mode as sandbox_mode

if TYPE_CHECKING:
    from memory.backends import BackendEnv
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.core.runner import Replay, ReplayConfig


@dataclass
class Judging:
    """A run's judges, kept in ``Replay.shared``: the MiniLM judge (``--threshold``), the
    LLM judge's model (``--judge-model``: a fresh judge and ledger per pair), each
    outline's judge-accuracy check (one per outline and run) and the sandbox's verdicts
    on generated functions (``tasks.Verdicts``)."""

    embed: EmbedJudge
    model: str | None = None
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    verdicts: Verdicts = field(default_factory=Verdicts)  # the sandbox's, shared by the pairs

    def judge(self) -> EmbedJudge | LLMJudge:
        if self.model:
            from memory.llm.client import LLM, LLMConfig

            return LLMJudge(LLM(LLMConfig(model=self.model)), self.embed)
        return self.embed


def judging(replay: Replay) -> Judging:
    """The run's ``Judging`` (made on first use)."""
    found = replay.shared.get("locoeval")
    if found is None:
        options = LocoevalOptions.of(replay.config)
        threshold = THRESHOLD if options.judge_threshold is None else options.judge_threshold
        found = replay.shared["locoeval"] = Judging(EmbedJudge(replay.embedder, threshold),
                                                    options.judge_model)
    return found


def run_voice(replay: Replay) -> Voice:
    """The run's voice (``--voice``; made on first use, its phrasing file loaded once)."""
    found = replay.shared.get("locoeval-voice")
    if found is None:
        found = replay.shared["locoeval-voice"] = voice_of(
            LocoevalOptions.of(replay.config).voice, replay.config.seed)
    return found


def said(replay: Replay, source: Outline, result: dict[str, Any]) -> Outline:
    """The outline as the mock user says it, and the voice in ``result``: the template
    user speaks in the run's voice; the LLM mock user words the items itself, so its run
    compares with the builder's text (the voice is recorded, not applied)."""
    voice = run_voice(replay)
    if LocoevalOptions.of(replay.config).mock_user == "llm":
        result["voice"] = {**voice.record(), "applied": False,
                           "why": "the LLM mock user words the items itself"}
        return source
    result["voice"] = voice.record(source)
    return voiced(source, voice)


class LoCoEvalBenchmark(BaseBenchmark):
    name = "locoeval"
    own_backends = MappingProxyType({"oracle": "an outline source"})

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

    def copy_repository(self, repo: Path, source: Any, dest: Path) -> None:
        prepared_copy(repo, self.targets(source), dest)  # without its targets and tests

    def problem(self, replay: Replay, source: Any) -> str | None:
        try:
            voice = run_voice(replay)
            if voice.phrasings is not None:
                voice.phrasings.check([source], every_outline=False)
        except VoiceError as exc:
            return str(exc)
        return None

    def backend(self, name: str, env: BackendEnv, source: Any) -> Any | None:
        return OracleBackend(env, source) if name == "oracle" else None

    async def drive(self, replay: Replay, source: Outline, name: str, repo: RepoIndex | None,
                    result: dict[str, Any], tick: Tick) -> Agent:
        config = replay.config
        source = said(replay, source, result)  # oracle, judges and metrics read it as said
        agent = replay.agent(source, name, repo)
        await converse(agent, source, repo, config, replay.embedder, result, tick)
        judges = judging(replay)
        judge = judges.judge().for_outline(source)  # knows each unit's distractors
        packs = TaskPacks(agent)
        scores = await outline_tasks(agent, source, judge, replay.outline_repo(source),
                                     config.limits, config.samples, judges.verdicts)
        result["scores"] = as_dict(scores)
        # reader-free context metrics by the judge's matcher, exact-text ones beside
        for key, value in packs.metrics(judges.embed.matcher, source).items():
            result["scores"][f"{key}_exact"] = result["scores"].get(key)
            result["scores"][key] = value
        result["subset"], result["k"] = source.subset, len(source.samples)
        result["l"] = len(source.queries())  # LoCoEval's conversation length
        checks = judges.checks
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

    # -- its options, checks and lines in the results ----------------------------------------
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from replay.locoeval.options import add_arguments

        add_arguments(parser)

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        from replay.locoeval.options import from_arguments

        return from_arguments(args)

    def check(self, config: ReplayConfig, sources: list[Any]) -> None:
        from replay.locoeval.voice import check_voice

        check_voice(LocoevalOptions.of(config).voice, sources, config.seed)  # a phrasing file
        refs = LocoevalOptions.of(config).references
        if refs is not None:
            from replay.locoeval.llmuser import load_reference_queries

            load_reference_queries(refs)  # fail before the run

    def models(self, config: ReplayConfig) -> list[str]:
        """The judge's model and the LLM mock user's (checked before the run, priced in
        the results)."""
        options = LocoevalOptions.of(config)
        return [m for m in (options.judge_model,
                            options.user_model if options.mock_user == "llm" else None) if m]

    def settings(self, config: ReplayConfig) -> dict[str, str]:
        from replay.locoeval.mockuser import user_label

        options = LocoevalOptions.of(config)
        return {"mock_user": user_label(options.mock_user, options.mock_user_why),
                "user_model": str(options.user_model)}

    def notes(self, config: ReplayConfig, pairs: list[dict[str, Any]]) -> list[str]:
        voiced = [p for p in pairs if p.get("mock_user")]  # outlines: which mock user ran
        if not voiced:
            return []
        skipped = {str(p.get("reference_queries")) for p in voiced
                   if str(p.get("reference_queries")).startswith("skipped")}
        refs = LocoevalOptions.of(config).reference_queries
        return [f"mock user: {', '.join(sorted({p['mock_user'] for p in voiced}))}; "
                "reference queries: " + (", ".join(sorted(skipped)) if skipped else
                                         f"from {refs}")
                + f"; voice: {', '.join(map(str, _report.voices(pairs)))}"]

    # -- its numbers in the report (replay.locoeval.report) ---------------------------------
    columns = _report.COLUMNS

    def scores(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        return _report.scores(rows)

    def finish(self, per: dict[str, dict[str, Any]]) -> None:
        _report.finish(per)

    def legend(self, summary: dict[str, Any]) -> str:
        return _report.legend(summary)

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        return _report.summary(pairs)

    def report(self, summary: dict[str, Any]) -> list[Any]:
        return _report.tables(summary)

    def commands(self) -> dict[str, Callable[[list[str]], int]]:
        from replay.locoeval.demo_command import demo

        return {"demo": demo}

    def build(self, request: BuildRequest) -> list[str]:
        """Outlines from ``request.targets`` (functions with tests) in ``request.repo``:
        8 by default (k = 1..4 in turn), 16 on the even grid; a build report beside."""
        from replay.locoeval._select import BuildRun, summary
        from replay.locoeval.build import load_targets

        if request.targets is None:
            raise ValueError("--targets is required to build outlines")
        targets = load_targets(request.targets)
        ref = os.path.relpath(request.repo.resolve(), request.out.resolve())
        count = request.count if request.count is not None else (16 if request.grid else 8)
        report = BuildRun(request.repo, targets, request.out, seed=request.seed, count=count,
                          grid=request.grid, model=request.model, repo_ref=ref).run()
        return [*summary(report), f"build report: {request.out / 'build-report.json'}"]


BENCHMARK = LoCoEvalBenchmark()
