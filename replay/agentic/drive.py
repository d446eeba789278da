"""One agentic pair: each recorded user turn asked again with the tools of
``ReplayTools``, each answer's edit blocks applied to the pair's clone (through
``memory.acting.workbench.Workbench``, as ``engram chat --apply`` does: the edit format in the
system prompt, an ``edit`` record per proposal and commit), then the final tests in the
sandbox.

Tokens within turns: the agent measures its tool loop apart from the answer
(``StepMeasuringAgent``), so a row says how many prompt tokens each turn's steps sent
(with a condenser's summaries made within the loop: ``compact``'s) and how many its
answer did; the backend's update after the turn (``observe``) stays out of both.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.acting.jail.tree import TreeJail
from memory.acting.tools.box import RepoTools
from memory.acting.tools.consent import ConsentPolicy
from memory.acting.tools.run import Limits as RunLimits
from memory.acting.tools.run import RunTool
from memory.acting.workbench import Workbench
from memory.llm.capabilities import EVERYTHING
from memory.turn.agent import Agent
from replay.agentic.checkout import checkout, final_tests
from replay.agentic.source import AgenticSession
from replay.agentic.tools import ReplayTools
from replay.core.names import safe_name

if TYPE_CHECKING:
    from memory.backends import Backend
    from memory.types import ContextPack, Turn
    from replay.benchmark import Tick
    from replay.core.runner import Replay

STEPS = "steps_usage"  # turn.meta["tools"] key: the tool loop's own usage


class StepMeasuringAgent(Agent):
    """An Agent whose tool loop's usage is noted in ``turn.meta["tools"]``."""

    @classmethod
    def adopt(cls, agent: Agent) -> StepMeasuringAgent:
        return cls(agent.backend, agent.llm, agent.env, agent.transcript,
                   config=agent.config, backends=agent.backends)

    async def _use_tools(self, backend: Backend, turn: Turn, pack: ContextPack) -> None:
        before = self.llm.ledger.copy()
        await super()._use_tools(backend, turn, pack)
        used = self.llm.ledger.since(before).get("memory")
        if "tools" in turn.meta:
            turn.meta["tools"][STEPS] = {"prompt_tokens": used.prompt_tokens,
                                         "completion_tokens": used.completion_tokens,
                                         "calls": used.calls}


def _apply(bench: Workbench, turn: Turn) -> dict[str, Any]:
    """The answer's edit blocks applied and committed in the clone (all or nothing)."""
    prepared = bench.propose(turn)
    if prepared is None:
        return {"edit": "none"}
    if not prepared.ok:
        return {"edit": "refused", "why": prepared.message}
    applied = bench.apply(prepared, turn)
    if not applied.ok:
        return {"edit": "refused", "why": applied.message}
    if applied.index_error:  # the next turns would search a stale index: not a fair pair
        raise RuntimeError(f"the index could not be refreshed: {applied.index_error}")
    return {"edit": "applied", "paths": list(applied.paths), "commit": applied.commit}


def turn_row(turn: Turn, edit: dict[str, Any]) -> dict[str, Any]:
    tools = turn.meta.get("tools") or {}
    steps = tools.get(STEPS) or {}
    answer = turn.usage.get("answer")
    calls = tools.get("calls") or []
    row = {"steps": int(tools.get("steps", 0)),
           "step_prompt_tokens": int(steps.get("prompt_tokens", 0)),
           "answer_prompt_tokens": answer.prompt_tokens,
           "peak": int(tools.get("peak", 0)),  # the largest request of the loop, in tokens
           "limit": int(tools.get("limit", 0)),  # what the loop kept it within
           "calls": [{"function": c.get("function"), "answered": c.get("answered", "")}
                     for c in calls],
           "error": turn.error or "", **edit}
    row["prompt_tokens"] = row["step_prompt_tokens"] + row["answer_prompt_tokens"]
    return row


async def drive_agentic(replay: Replay, source: AgenticSession, name: str,
                        result: dict[str, Any], tick: Tick) -> Agent:
    config = replay.config
    repo = config.repo or Path(source.repo)
    work = replay.work / "agentic" / safe_name(f"{source.id}__{name}") / "repo"
    sha = await asyncio.to_thread(checkout, repo, source.commit, work)
    async with replay.lock:
        index = await asyncio.to_thread(replay.plain_index, work)
    agent = StepMeasuringAgent.adopt(replay.agent(source, name, index))
    # every model is offered the tools and the edit format: what it makes of them is measured
    bench = Workbench(agent, work, ConsentPolicy.preallowed(), commands=False,
                      offer=EVERYTHING)
    runner = RunTool(work, ConsentPolicy.preallowed(), TreeJail(),
                     RunLimits(timeout=config.limits.timeout))
    tools = ReplayTools(source.log, RepoTools(work, index, constrained=agent.llm.constrained()),
                        runner)
    agent.tools = tools  # in place of the workbench's: reads from the record
    total = len(source.queries) + 1
    turns: list[dict[str, Any]] = []
    for n, query in enumerate(source.queries):
        tools.turn = n
        turn = await agent.ask(query)
        async with replay.lock:  # an applied edit refreshes the index (the workbench's)
            edit = await asyncio.to_thread(_apply, bench, turn)
        if edit["edit"] == "applied":
            tools.changed.update(edit["paths"])
        turns.append(turn_row(turn, edit))
        tick(n + 1, total)
    verdict = await asyncio.to_thread(final_tests, work, source.tests, config.limits)
    result["origin"], result["skipped_records"] = source.origin, source.skipped
    result["sandbox"] = verdict.sandbox or None
    result["agentic"] = {
        "commit": sha, "commit_recorded": bool(source.commit), "turns": turns,
        "step_prompt_tokens": sum(t["step_prompt_tokens"] for t in turns),
        "answer_prompt_tokens": sum(t["answer_prompt_tokens"] for t in turns),
        "prompt_tokens_in_turns": sum(t["prompt_tokens"] for t in turns),
        "steps": sum(t["steps"] for t in turns),
        "peak": max((t["peak"] for t in turns), default=0),
        "answered": dict(tools.answered), "recorded": source.log.counts(),
        "edits_applied": sum(1 for t in turns if t["edit"] == "applied"),
        "edits_refused": sum(1 for t in turns if t["edit"] == "refused"),
        "tests": verdict.as_dict(), "tests_pass": verdict.passed}
    return agent
