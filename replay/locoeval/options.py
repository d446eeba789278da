"""LoCoEval's own options of ``engram replay``: who voices the outline queries (the mock
user, its model, its style references, the share of revisions voiced with a cue) and how
set matches are judged (MiniLM and its threshold, or an LLM), and the voice the template
user words the items in (``replay.locoeval.voice``). The CLI's values travel in
the run's config as plain values (``ReplayConfig.benchmark_options["locoeval"]``)."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.benchmark import options_of

if TYPE_CHECKING:
    from replay.core.runner import ReplayConfig

NAME = "locoeval"


@dataclass(frozen=True)
class LocoevalOptions:
    mock_user: str = "template"  # template | llm (the CLI picks: mockuser.choose_user)
    mock_user_why: str = ""  # why that user: "offline default", "chosen"... (in the results)
    user_model: str | None = None  # the LLM mock user's model (default: the answer model)
    reference_queries: str | None = None  # real questions: LoCoEval's style references
    revision_cues: float = 0.0  # share of replacing items voiced with a cue (0: LoCoEval's)
    judge_threshold: float | None = None  # the embed judge's cosine (None: its default)
    judge_model: str | None = None  # set: an LLM judges set matches (None: the run's)
    voice: str = "template"  # how the template user words items: template | varied | FILE

    @classmethod
    def of(cls, config: ReplayConfig) -> LocoevalOptions:
        """The run's options (defaults for those not given); the LLM judge's model is the
        run's ``judge_model`` unless ``--judge llm`` named one here."""
        given = dict(options_of(config, NAME))
        known = {f.name for f in fields(cls)}
        found = cls(**{k: v for k, v in given.items() if k in known})
        if found.judge_model is None and config.judge_model:
            found = cls(**{**asdict(found), "judge_model": config.judge_model})
        return found

    @property
    def references(self) -> Path | None:
        return Path(self.reference_queries) if self.reference_queries else None


def _rate(text: str) -> float:
    from replay.cli.args import checked

    return checked(float, "a number", lambda v: 0.0 <= v <= 1.0, "in [0, 1]")(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LoCoEval outlines")
    group.add_argument("--mock-user", choices=["template", "llm"], default=None,
                       help="who voices outline queries: template (deterministic, no LLM) "
                            "or llm (LoCoEval's mock user); default: llm with any model "
                            "but the embedded local/ one, template offline")
    group.add_argument("--user-model", default=None,
                       help="the LLM mock user's model (default: --model)")
    group.add_argument("--reference-queries", type=Path, default=None, metavar="FILE",
                       help="real developer questions (one per line, or JSONL with a "
                            "\"query\" field): the LLM mock user gets one of the 10 most "
                            "similar as a style reference (LoCoEval); skipped without it")
    group.add_argument("--revision-cues", type=_rate, default=0.0, metavar="RATE",
                       help="share of the items replacing an earlier version that the mock "
                            "user voices with a cue ('Actually, ...'); default 0: only the "
                            "order tells, LoCoEval's condition")
    group.add_argument("--judge", choices=["embed", "llm"], default="embed",
                       help="set matching for F1 tasks: embed (MiniLM cosine, offline) or "
                            "llm (needs --judge-model, or uses --model)")
    group.add_argument("--threshold", type=float, default=None,
                       help="cosine threshold of the embed judge")
    from replay.locoeval.voice import add_voice_argument

    add_voice_argument(group)  # type: ignore[arg-type]


def from_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The options as plain values (what ``ReplayConfig.benchmark_options`` carries)."""
    from memory.llm.client import default_model
    from replay.locoeval.judge import THRESHOLD
    from replay.locoeval.mockuser import choose_user

    model = args.model or default_model()
    user = choose_user(args.mock_user, model, args.user_model)
    refs = args.reference_queries
    return asdict(LocoevalOptions(
        mock_user=user.kind, mock_user_why=user.why, user_model=user.model,
        reference_queries=str(refs) if refs is not None else None,
        revision_cues=args.revision_cues,
        judge_threshold=args.threshold if args.threshold is not None else THRESHOLD,
        judge_model=args.judge_model or (model if args.judge == "llm" else None),
        voice=args.voice))
