"""LongCodeQA-style questions as a benchmark: multiple-choice questions about a repository,
asked at four context-length brackets; ``full`` is the whole repository as text. A
question file is built from a repository's own facts (``build``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, BuildRequest, Probe, Tick
from replay.core.errors import SourceError
from replay.longcodeqa._qa_report import BRACKET_COLUMNS, QA_COLUMNS, QA_LEGEND, qa_scores
from replay.longcodeqa._qarepo import RepoTextBackend
from replay.longcodeqa.qa import QAError, QASet, is_lcb, parse_qa
from replay.longcodeqa.qa_run import ask_brackets

if TYPE_CHECKING:
    from memory.backends import BackendEnv
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
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

    def copy_repository(self, repo: Path, source: Any, dest: Path) -> None:
        from replay.locoeval.prepare import prepared_copy

        prepared_copy(repo, [], dest)  # a plain copy, its own git repository

    def backend(self, name: str, env: BackendEnv, source: Any) -> Any | None:
        return RepoTextBackend(env) if name == "full" else None  # LongCodeBench's baseline

    async def drive(self, replay: Replay, source: QASet, name: str, repo: RepoIndex | None,
                    result: dict[str, Any], tick: Tick) -> Agent:
        agent = replay.agent(source, name, repo)
        result["qa"] = await ask_brackets(agent, source, replay.config.seed,
                                          lambda done, total: tick(done, total + 1))
        return agent

    columns = QA_COLUMNS

    def scores(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        return qa_scores(rows)

    def legend(self, summary: dict[str, Any]) -> str:
        return QA_LEGEND.strip() if _has_qa(summary) else ""

    def report(self, summary: dict[str, Any]) -> list[Any]:
        from replay.reporting.report import _table

        if not _has_qa(summary):
            return []
        return [_table("qa: accuracy by context bracket (share of the window)",
                       summary["backends"], BRACKET_COLUMNS)]

    def build(self, request: BuildRequest) -> list[str]:
        """One question file in ``request.out`` from the repository's own facts (raises,
        defines, parameter defaults), 20 by default; with ``request.model``, those the
        model answers without context are dropped."""
        from replay.longcodeqa.qa import as_json
        from replay.longcodeqa.qa_build import build_qa

        if not request.repo.is_dir():
            raise ValueError(f"{request.repo}: not a folder")
        request.out.mkdir(parents=True, exist_ok=True)
        ref = os.path.relpath(request.repo.resolve(), request.out.resolve())
        qa, report = build_qa(request.repo, seed=request.seed, count=request.count or 20,
                              model=request.model, repo_ref=ref)
        path = request.out / f"{qa.id}.json"
        path.write_text(json.dumps(as_json(qa, report), indent=2) + "\n")
        checked = report["contamination_filter"]
        said = checked if isinstance(checked, str) else \
            f"{len(checked['dropped'])} answered without context by {checked['model']}, dropped"
        return [f"{report['kept']} questions ({report['built']} built; contamination "
                f"filter: {said}): {path}"]


def _has_qa(summary: dict[str, Any]) -> bool:
    return any(r.get("qa_all") is not None for r in (summary.get("backends") or {}).values())


BENCHMARK = LongCodeQABenchmark()
