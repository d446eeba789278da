"""After-conversation tasks of an outline (asked with ``commit=False``).

Outline tasks, as LoCoEval defines them: topic awareness (F1 of the topics named
vs the ground truth), information-item extraction per sample (F1 vs the sample's
true items), function generation per sample (pass@1: the generated function put
in a sandboxed copy of the stubbed repo, each of the sample's tests one pytest
run). The reader-free context metrics look at the ContextPack of each generation
task: recall of true items and the share of stale (distracting) items present.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.fences import fenced
from memory.index.repo import LocationRefused, RepoIndex
from memory.turn.agent import Agent
from memory.types import ContextPack
from replay.locoeval.judge import EmbedJudge, LLMJudge, answer_lines
from replay.locoeval.outline import Item, Outline, Sample
from replay.locoeval.prepare import PrepareError, extract_function, insert_function
from replay.sandbox.sandbox import Limits, Sandbox

TOPICS_QUERY = ("List every topic we have worked on in this conversation so far, "
                "one short phrase per line, nothing else.")


@dataclass
class TaskScores:
    topic_f1: float | None = None
    extract_f1: dict[str, float] = field(default_factory=dict)
    passed: dict[str, bool] = field(default_factory=dict)
    passes: dict[str, list[bool]] = field(default_factory=dict)  # every sample's verdict
    recall: dict[str, float] = field(default_factory=dict)
    stale: dict[str, float] = field(default_factory=dict)
    context_tokens: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def present(item: Item, pack_text: str, repo: RepoIndex | None) -> bool:
    """An item is in the pack when its text, or the code of one of its locations, is."""
    if _norm(item.text) in pack_text:
        return True
    for location in item.locations:
        if repo is None:
            break
        try:
            found = repo.locate(location)
        except LocationRefused:
            continue
        if found is not None and found.exact and _norm(found.chunk.code) in pack_text:
            return True
    return False


def context_metrics(sample: Sample, pack: ContextPack,
                    repo: RepoIndex | None) -> tuple[float, float]:
    """(recall of true items, share of stale items among the items present)."""
    text = _norm("\n".join(s.text for s in pack.sections))
    true_items = [i for i in sample.items if i.truth]
    found_true = [i for i in true_items if present(i, text, repo)]
    found_stale = [i for i in sample.items if not i.truth and present(i, text, repo)]
    recall = len(found_true) / len(true_items) if true_items else 1.0
    shown = len(found_true) + len(found_stale)
    return recall, (len(found_stale) / shown if shown else 0.0)


def extract_target(answer: str, qualname: str) -> str | None:
    """The definition of ``qualname`` (``func`` or ``Class.method``) in an answer's code,
    dedented (``replay.locoeval.prepare.extract_function``: fenced examples in its
    docstring stay in it)."""
    return extract_function(answer, qualname)


def answer_with(code: str) -> str:
    """An answer that is ``code`` in one Python block, fenced as CommonMark asks (a fence
    longer than any inside the code): how the scripted readers write an answer, and what
    sample selection grades the original function through."""
    return fenced(code, "python")


def run_generated(repo: Path, sample: Sample, answer: str, limits: Limits) -> bool:
    """Put the generated function in a fresh sandbox copy of the original repository (the
    other targets intact, as DevEval's harness does) and run its tests (one pytest process)."""
    return run_code(repo, sample, extract_target(answer, sample.function), limits)


def run_code(repo: Path, sample: Sample, code: str | None, limits: Limits) -> bool:
    """``run_generated`` for the function's text already taken from the answer (None: the
    answer held none, which fails)."""
    if code is None or not sample.tests:
        return False
    with Sandbox(repo, limits=limits) as box:
        try:
            box.write(sample.path, insert_function(box.read(sample.path), sample.function, code))
        except PrepareError:
            return False
        return box.pytest(*sample.tests).ok


@dataclass
class Verdicts:
    """One run's verdicts by what decides them: the same function text for the same
    sample of the same repository, under the same limits, gets the verdict its first
    sandbox run gave. A deterministic model writes the same code from the contexts of
    several backends: on the demo half of the generation tasks' runs were repeats."""

    known: dict[tuple[Any, ...], bool] = field(default_factory=dict)
    runs: int = 0
    reused: int = 0

    async def verdict(self, repo: Path, sample: Sample, answer: str, limits: Limits) -> bool:
        code = extract_target(answer, sample.function)
        key = (str(repo), sample.path, sample.function, tuple(sample.tests), code, limits)
        if key in self.known:
            self.reused += 1
            return self.known[key]
        self.runs += 1
        passed = self.known[key] = await asyncio.to_thread(run_code, repo, sample, code,
                                                           limits)
        return passed


async def outline_tasks(agent: Agent, outline: Outline, judge: EmbedJudge | LLMJudge, repo: Path,
                        limits: Limits, samples: int = 1,
                        verdicts: Verdicts | None = None) -> TaskScores:
    """The tasks after the conversation; ``repo`` is the original (unstubbed) repository.
    With ``samples`` N > 1 each generation task is answered N times (``passes``: pass@1
    by the unbiased estimator, c / n); ``passed`` keeps the first answer's verdict.
    ``verdicts``: the run's, shared by its pairs (else this call's own)."""
    verdicts = verdicts if verdicts is not None else Verdicts()
    scores = TaskScores()
    if outline.tasks.topics:
        turn = await agent.ask(TOPICS_QUERY, commit=False)
        scores.topic_f1 = (await judge.score_async(answer_lines(turn.assistant),
                                                   list(outline.tasks.topics))).f1
    for sample_id, query in outline.tasks.extract.items():
        sample = outline.sample(sample_id)
        turn = await agent.ask(query, commit=False)
        truth = [i.text for i in sample.items if i.truth]
        scores.extract_f1[sample_id] = (
            await judge.score_async(answer_lines(turn.assistant), truth)).f1
    for sample_id, query in outline.tasks.generate.items():
        sample = outline.sample(sample_id)
        turn = await agent.ask(query, commit=False)
        pack = agent.last_pack
        if pack is not None:
            scores.recall[sample_id], scores.stale[sample_id] = context_metrics(
                sample, pack, agent.env.repo)
            scores.context_tokens[sample_id] = pack.tokens
        answers = [turn.assistant] + [(await agent.ask(query, commit=False)).assistant
                                      for _ in range(samples - 1)]
        passed = [await verdicts.verdict(repo, sample, answer, limits) for answer in answers]
        scores.passed[sample_id] = passed[0]
        if samples > 1:
            scores.passes[sample_id] = passed
    return scores


def as_dict(scores: TaskScores) -> dict[str, Any]:
    return {"topic_f1": scores.topic_f1, "extract_f1": scores.extract_f1,
            "passed": scores.passed, **({"passes": scores.passes} if scores.passes else {}),
            "recall": scores.recall, "stale": scores.stale,
            "context_tokens": scores.context_tokens, "notes": scores.notes}
