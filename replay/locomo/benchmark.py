"""LoCoMo (Maharana et al., ACL 2024) as a benchmark: each conversation a source, its
sessions fed to the backend in order, its questions asked of the memory after the last
session and scored as LoCoMo's evaluation scores them; ``--reader-free`` builds each
question's context only, for evidence recall and tokens (no model answers).

The data is the user's own copy (github.com/snap-research/locomo, CC BY-NC 4.0): its
``data/locomo10.json``, or the per-conversation files of its ``data/locomo10.zip`` (one
file, or their folder); engram neither ships nor downloads it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import BaseBenchmark, Probe, Tick, options_of
from replay.core.errors import SourceError
from replay.locomo.data import (
    Conversation,
    LocomoError,
    conversation_files,
    looks_like,
    looks_like_one,
    read,
)

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.core.runner import Replay


def _questions(text: str) -> int:
    from replay.cli.args import checked

    return checked(int, "a whole number", lambda v: v >= 1, ">= 1")(text)


class LocomoBenchmark(BaseBenchmark):
    name = "locomo"
    columns = (("LoCoMo F1 1-4 ↑", "locomo_f1", 3), ("ev. recall 1-4 ↑", "locomo_recall", 3))
    score_keys = ("locomo_f1", "locomo_recall")

    def claims(self, probe: Probe) -> int:
        if probe.is_dir:  # a folder of one-conversation files (locomo10.zip's)
            files = conversation_files(probe.path)
            return 2 if files and looks_like_one(Probe(files[0]).data) else 0
        if probe.suffix != ".json":
            return 0
        if looks_like(probe.data) or looks_like_one(probe.data):
            return 2
        # a broken file named like LoCoMo's: ours to say what is wrong with it
        return 1 if probe.data is None and "locomo" in probe.path.name.lower() else 0

    def load(self, path: Path) -> list[Any]:
        try:
            return list(read(path))
        except LocomoError as exc:
            raise SourceError(str(exc)) from exc

    def owns(self, source: Any) -> bool:
        return isinstance(source, Conversation)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("LoCoMo")
        group.add_argument("--reader-free", action="store_true",
                           help="LoCoMo: no answers asked of a model; each question's context "
                                "is built and scored for evidence recall and tokens only")
        group.add_argument("--questions", type=_questions, default=None, metavar="N",
                           help="LoCoMo: the first N questions of each conversation only "
                                "(its whole conversation is still fed; default: all)")

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"reader_free": bool(getattr(args, "reader_free", False)),
                "questions": getattr(args, "questions", None)}

    async def drive(self, replay: Replay, source: Conversation, name: str,
                    repo: RepoIndex | None, result: dict[str, Any], tick: Tick) -> Agent:
        from replay.locomo.drive import run
        from replay.locomo.judge import Judge

        options = options_of(replay.config, self.name)
        reader_free = bool(options.get("reader_free"))
        model = replay.config.judge_model
        judge = Judge(model) if model and not reader_free else None
        agent = replay.agent(source, name, repo)
        result["locomo"] = await run(agent, source, seed=replay.config.seed,
                                     reader_free=reader_free, judge=judge, tick=tick,
                                     questions=options.get("questions"))
        if judge is not None:
            result["judge_model"] = model
            result["judge_tokens"] = judge.llm.ledger.tokens
            result["judge_usage"] = judge.llm.ledger.to_dict()
        return agent

    def scores(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Categories 1-4 pooled in the backend's row: F1 (with a reader) and evidence
        recall (by turn)."""
        from replay.locomo.report import summary

        found = summary(rows)
        if not found:
            return {}
        pooled = next(iter(found.values()))["by_category"].get("1-4") or {}
        return {"locomo_f1": pooled.get("f1"), "locomo_recall": pooled.get("recall")}

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        from replay.locomo.report import summary

        found = summary(pairs)
        return {"locomo": found} if found else {}

    def report(self, summary: dict[str, Any]) -> list[Any]:
        from replay.locomo.report import tables

        return tables(summary.get("locomo") or {})


BENCHMARK = LocomoBenchmark()
