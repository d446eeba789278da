"""After-conversation tasks (asked with ``commit=False``) and iterative per-turn tests.

Outline tasks, as LoCoEval defines them: topic awareness (F1 of the topics named
vs the ground truth), information-item extraction per sample (F1 vs the sample's
true items), function generation per sample (pass@1: the generated function put
in a sandboxed copy of the stubbed repo, each of the sample's tests one pytest
run). The reader-free context metrics look at the ContextPack of each generation
task: recall of true items and the share of stale (distracting) items present.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.agent import Agent
from memory.backends._codeast import code_blocks
from memory.repo import LocationRefused, RepoIndex
from memory.types import ContextPack
from replay.judge import EmbedJudge, LLMJudge, answer_lines
from replay.outline import Item, Outline, Sample
from replay.prepare import PrepareError, extract_function, insert_function
from replay.sandbox import Limits, Sandbox
from replay.sources import Iterative

TOPICS_QUERY = ("List every topic we have worked on in this conversation so far, "
                "one short phrase per line, nothing else.")
PASSED_MARK = "ENGRAM-PASSED "


@dataclass
class TaskScores:
    topic_f1: float | None = None
    extract_f1: dict[str, float] = field(default_factory=dict)
    passed: dict[str, bool] = field(default_factory=dict)
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


def run_generated(repo: Path, sample: Sample, answer: str, limits: Limits) -> bool:
    """Put the generated function in a fresh sandbox copy of the original repository (the
    other targets intact, as DevEval's harness does) and run its tests (one pytest process)."""
    name = sample.function.split(".")[-1]
    code = extract_function(answer, name)
    if code is None or not sample.tests:
        return False
    with Sandbox(repo, limits=limits) as box:
        try:
            box.write(sample.path, insert_function(box.read(sample.path), sample.function, code))
        except PrepareError:
            return False
        return box.pytest(*sample.tests).ok


async def outline_tasks(agent: Agent, outline: Outline, judge: EmbedJudge | LLMJudge, repo: Path,
                        limits: Limits) -> TaskScores:
    """The tasks after the conversation; ``repo`` is the original (unstubbed) repository."""
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
        scores.passed[sample_id] = await asyncio.to_thread(
            run_generated, repo, sample, turn.assistant, limits)
    return scores


def harness_module(code: str, tests: list[str]) -> str:
    """CodeIF-Bench's harness as one module: the code, then each assert run on its own."""
    return (f"{code}\n\n\nimport json as _engram_json\n_engram_ok = []\n"
            f"for _engram_i, _engram_t in enumerate({tests!r}):\n"
            "    try:\n        exec(_engram_t, globals())\n"
            "        _engram_ok.append(_engram_i)\n"
            "    except Exception:\n        pass\n"
            f"print({PASSED_MARK!r} + _engram_json.dumps(_engram_ok))\n")


def passed_tests(answer: str, tests: list[str], limits: Limits) -> set[int]:
    """Indices of ``tests`` the answer's code passes (none if it has no code or crashes)."""
    code = "\n\n".join(code_blocks(answer))
    if not code.strip() or not tests:
        return set()
    with Sandbox(files={"solution.py": harness_module(code, tests)}, limits=limits) as box:
        result = box.python("solution.py")
    for line in result.stdout.splitlines():
        if line.startswith(PASSED_MARK):
            try:
                return {int(i) for i in json.loads(line[len(PASSED_MARK):])}
            except (ValueError, TypeError):
                return set()
    return set()


async def iterative_turn(task: Iterative, turn: int, answer: str,
                         limits: Limits) -> tuple[list[str], set[str]]:
    """(test ids introduced at ``turn``, ids of turns 0..turn that the answer passes)."""
    ids: list[str] = []
    tests: list[str] = []
    for n, step in enumerate(task.steps[:turn + 1]):
        for i, test in enumerate(step.tests):
            ids.append(f"{n}.{i}")
            tests.append(test)
    ok = await asyncio.to_thread(passed_tests, answer, tests, limits)
    introduced = [f"{turn}.{i}" for i in range(len(task.steps[turn].tests))]
    return introduced, {ids[i] for i in ok}


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80] or "source"


def as_dict(scores: TaskScores) -> dict[str, Any]:
    return {"topic_f1": scores.topic_f1, "extract_f1": scores.extract_f1,
            "passed": scores.passed, "recall": scores.recall, "stale": scores.stale,
            "context_tokens": scores.context_tokens, "notes": scores.notes}
