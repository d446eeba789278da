"""Drive one agent through an iterative task: each instruction answered, each answer graded.

The runner owns the pair (its agent, ledger, transcript, result); this only talks to the
agent and reports progress as ``tick(done, total)``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from replay.codeif._codeif import IterativeOptions
from replay.codeif.grade import grade_turn, iterative_scores
from replay.codeif.source import Iterative
from replay.sandbox.sandbox import Limits

if TYPE_CHECKING:
    from memory.turn.agent import Agent
    from replay.benchmark import Tick


async def iterate(agent: Agent, task: Iterative, samples: int, limits: Limits,
                  options: IterativeOptions, tick: Tick) -> dict[str, Any]:
    """Each instruction answered; with ``samples`` N > 1, N - 1 more answers are drawn
    first from the same state (``commit=False``) and graded beside the committed one:
    their verdicts per turn under ``samples`` (the committed answer's first) give
    pass@k. IA / CA / IFR follow the committed answers, the conversation itself."""
    graded, drawn = [], []
    for n, step in enumerate(task.steps):
        extras = [await agent.ask(step.instruction, commit=False) for _ in range(samples - 1)]
        turn = await agent.ask(step.instruction)
        verdicts = []
        for answer in [turn.assistant, *(e.assistant for e in extras)]:
            verdicts.append(await asyncio.to_thread(grade_turn, task, n, answer, limits,
                                                    options))
        graded.append(verdicts[0])
        drawn.append([g.verdict for g in verdicts])
        tick(n + 1, len(task.steps) + 1)
    scores = iterative_scores(graded)  # per turn under "turns"; IA only where tests are
    if samples > 1:
        scores["samples"] = drawn
    return scores
