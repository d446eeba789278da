"""Drive one agent through a source's conversation: an outline's queries voiced by a
mock user, or an iterative task's instructions with each answer graded.

The runner (``replay.runner``) owns the pair (its agent, ledger, transcript, result);
these functions only talk to the agent and report progress as ``tick(done, total)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from replay._codeif import IterativeOptions
from replay.llmuser import LLMUser, ReferenceQueries
from replay.mockuser import TemplateUser, user_label
from replay.outline import Outline
from replay.sandbox import Limits
from replay.sources import Iterative
from replay.tasks import grade_turn, iterative_scores

if TYPE_CHECKING:
    from memory.agent import Agent
    from memory.embed import Embedder
    from memory.repo import RepoIndex
    from replay.runner import ReplayConfig

Tick = Callable[[int, int], None]  # (done, total)


async def converse(agent: Agent, outline: Outline, repo: RepoIndex | None,
                   config: ReplayConfig, embedder: Embedder, result: dict[str, Any],
                   tick: Tick) -> None:
    """The outline's queries, voiced by the template or the LLM mock user; what the mock
    user was and spent goes into ``result``."""
    from memory.llm import LLM, LLMConfig

    total = len(outline.queries())
    result["mock_user"] = user_label(config.mock_user, config.mock_user_why)
    result["reference_queries"] = "skipped (template user)"
    result["revision_cues"] = config.revision_cues
    if config.mock_user == "llm":
        model = config.user_model or config.model
        refs = config.reference_queries
        user = LLMUser(outline, LLM(LLMConfig(model=model)), repo, config.seed,
                       ReferenceQueries.from_file(refs, embedder) if refs else None,
                       config.revision_cues)
        result["user_model"] = model
        result["reference_queries"] = user.reference_status
        previous = ""
        for n in range(total):
            turn = await agent.ask(await user.message(n, previous))
            previous = turn.assistant
            tick(n + 1, total + 1)
        result["user_tokens"] = user.llm.ledger.tokens
        result["user_usage"] = user.llm.ledger.to_dict()
        result["user_fallbacks"] = user.fallbacks
        result["reference_queries"] = user.reference_status
        return
    template = TemplateUser(outline, config.seed, config.revision_cues)
    for n, (_, text) in enumerate(template.conversation()):
        await agent.ask(text)
        tick(n + 1, total + 1)


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
