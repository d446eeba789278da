"""Run an ``experience`` source (SWE-ContextBench): experience tasks, then related tasks
under each of the paper's five settings, every task in a fresh conversation.

- Experience tasks: the developer states the task's facts, then asks for the function;
  the answer is graded by the target's tests; the transcript is kept, and a ~200-word
  summary of it is written through the structured-output path.
- Related tasks, per setting: ``none`` (the instruction alone), ``free`` (the backend
  first observes every experience transcript; its own memory decides what comes back),
  ``oracle`` (the transcripts of the tasks it depends on, given before the
  instruction), ``free-summary`` (the backend observes every summary), ``oracle-summary``
  (the summaries of the tasks it depends on, given).
Per task: resolved (its tests pass), prompt tokens of the task's LLM calls (memory
operations included; feeding the pool to the memory is counted apart), wall seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.llm.client import LLM
from memory.turn.agent import Agent
from memory.types import Turn, Usage
from replay.locoeval.outline import Sample
from replay.locoeval.tasks import run_generated
from replay.sandbox.sandbox import Limits
from replay.swecontext.experience import SETTINGS, ExperienceSet, Task

SUMMARY_WORDS = 200
SUMMARY_SYSTEM = (
    "You summarise a finished coding task for a colleague who will work on related tasks "
    f"later. In about {SUMMARY_WORDS} words, say what was asked, the decisions and facts "
    "settled (names, parameters, behaviour, rules), and the code written. Reply as JSON: "
    '{"summary": "..."}.')
SUMMARY_SCHEMA = {"type": "object", "properties": {"summary": {"type": "string"}},
                  "required": ["summary"], "additionalProperties": False}
NewAgent = Callable[[str], Agent]  # conversation name -> a fresh agent on the prepared repo


@dataclass
class Experience:
    """What the experience tasks left: transcripts, summaries, grades."""

    transcripts: dict[str, list[Turn]] = field(default_factory=dict)
    summaries: dict[str, str] = field(default_factory=dict)
    graded: dict[str, dict[str, Any]] = field(default_factory=dict)


def prompt_tokens(usage: Usage) -> int:
    return sum(c.prompt_tokens for c in usage.by_purpose.values())


def sample_of(task: Task) -> Sample:
    return Sample(task.id, task.namespace, task.path, task.signature, task.tests, ())


def transcript_text(turns: list[Turn]) -> str:
    return "\n".join(f"Developer: {t.user}\nAssistant: {t.assistant}" for t in turns)


def cap_words(text: str, limit: int = SUMMARY_WORDS + SUMMARY_WORDS // 4) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" ..." if len(words) > limit else "")


async def summarise(llm: LLM, task: Task, turns: list[Turn]) -> str:
    """A ~200-word summary of an experience task's transcript (structured output)."""
    value = await llm.ask_json(SUMMARY_SYSTEM, f"Task: {task.instruction}\n\n"
                               f"{transcript_text(turns)}", SUMMARY_SCHEMA,
                               purpose="memory", name="task_summary")
    return cap_words(str(value.get("summary", "")) if isinstance(value, dict) else "")


async def grade(repo: Path, task: Task, answer: str, limits: Limits) -> bool:
    return await asyncio.to_thread(run_generated, repo, sample_of(task), answer, limits)


async def run_experience_tasks(chains: ExperienceSet, new_agent: NewAgent, summary_llm: LLM,
                               repo: Path, limits: Limits) -> Experience:
    done = Experience()
    for task in chains.experience:
        agent = new_agent(f"experience-{task.id}")
        started = time.time()
        before = agent.llm.ledger.copy()
        facts = " ".join(task.facts)
        await agent.ask(f"{task.instruction}\n\nWhat we know: {facts}" if facts
                        else task.instruction)
        turn = await agent.ask(task.request)
        done.transcripts[task.id] = list(agent.turns)
        done.graded[task.id] = {
            "resolved": await grade(repo, task, turn.assistant, limits),
            "prompt_tokens": prompt_tokens(agent.llm.ledger.since(before)),
            "seconds": round(time.time() - started, 3)}
        if agent.transcript is not None:
            agent.transcript.close()
        done.summaries[task.id] = await summarise(summary_llm, task, done.transcripts[task.id])
    return done


def _given(setting: str, task: Task, done: Experience) -> str:
    """What an oracle setting puts before the instruction."""
    if setting == "oracle":
        return "\n\n".join(f"Earlier related task {d} (its conversation):\n"
                           f"{transcript_text(done.transcripts[d])}" for d in task.depends_on)
    if setting == "oracle-summary":
        return "\n\n".join(f"Earlier related task {d} (summary): {done.summaries[d]}"
                           for d in task.depends_on)
    return ""


async def _feed(agent: Agent, setting: str, chains: ExperienceSet, done: Experience) -> None:
    """The free settings: the backend observes the whole pool before the task."""
    turns: list[Turn] = []
    if setting == "free":
        turns = [t for e in chains.experience for t in done.transcripts[e.id]]
    elif setting == "free-summary":
        turns = [Turn(index=0, user=f"Summary of earlier task {e.id}: {done.summaries[e.id]}",
                      assistant="Noted.") for e in chains.experience]
    for n, turn in enumerate(turns):
        copy = Turn(index=n, user=turn.user, assistant=turn.assistant, backend=turn.backend,
                    model=turn.model)
        await agent.commit(copy)


async def related_task(task: Task, setting: str, agent: Agent, chains: ExperienceSet,
                       done: Experience, repo: Path, limits: Limits) -> dict[str, Any]:
    fed = time.time()
    before = agent.llm.ledger.copy()
    await _feed(agent, setting, chains, done)
    pool = prompt_tokens(agent.llm.ledger.since(before))
    started = time.time()
    before = agent.llm.ledger.copy()
    given = _given(setting, task, done)
    turn = await agent.ask(f"{given}\n\n{task.instruction}\n\n{task.request}" if given
                           else f"{task.instruction}\n\n{task.request}", commit=False)
    used = agent.llm.ledger.since(before)
    seconds = time.time() - started
    return {"resolved": await grade(repo, task, turn.assistant, limits),
            "prompt_tokens": prompt_tokens(used),
            "completion_tokens": sum(c.completion_tokens for c in used.by_purpose.values()),
            "seconds": round(seconds, 3), "pool_tokens": pool,
            "pool_seconds": round(started - fed, 3), "error": turn.error}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


async def run_settings(chains: ExperienceSet, settings: tuple[str, ...], new_agent: NewAgent,
                       done: Experience, repo: Path, limits: Limits,
                       tick: Callable[[], None] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for setting in settings:
        tasks: dict[str, Any] = {}
        for task in chains.related:
            agent = new_agent(f"{setting}-{task.id}")
            tasks[task.id] = await related_task(task, setting, agent, chains, done, repo,
                                                limits)
            if agent.transcript is not None:
                agent.transcript.close()
            if tick is not None:
                tick()
        rows = list(tasks.values())
        out[setting] = {"tasks": tasks,
                        "resolved": _mean([float(r["resolved"]) for r in rows]),
                        "prompt_tokens": _mean([float(r["prompt_tokens"]) for r in rows]),
                        "seconds": _mean([float(r["seconds"]) for r in rows]),
                        "pool_tokens": _mean([float(r["pool_tokens"]) for r in rows])}
    return out


def check_settings(names: list[str]) -> tuple[str, ...]:
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        raise ValueError(f"unknown experience setting(s) {', '.join(unknown)}; known: "
                         f"{', '.join(SETTINGS)}")
    return tuple(names)
