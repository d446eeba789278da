"""Ask a ``qa`` source's questions at each context-length bracket and score them.

Every question is asked with ``commit=False`` (nothing is remembered between
questions), once per bracket: the backend may fill 1/8, 1/4, 1/2 or all of the
budget the model's window leaves. Per bracket: accuracy (the answer's letter is
the correct one), and the reader-free share of questions whose evidence (the code
that answers them) is in the context the model saw.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from memory.turn.agent import Agent
from replay.longcodeqa.qa import BRACKETS, QASet, parse_letter

if TYPE_CHECKING:
    from replay.benchmark import Tick


def _norm(text: str) -> str:
    return " ".join(text.split())


async def ask_brackets(agent: Agent, qa: QASet, seed: int,
                       tick: Tick | None = None) -> dict[str, Any]:
    """``{"brackets": {name: {accuracy, correct, total, evidence, context_tokens}},
    "answers": [...]}`` for ``qa`` through ``agent``."""
    base = agent.config
    brackets: dict[str, Any] = {}
    answers: list[dict[str, Any]] = []
    total = len(BRACKETS) * len(qa.questions)
    done = 0
    try:
        for name, share in BRACKETS:
            agent.config = dataclasses.replace(base, budget_share=share)
            correct = found = tokens = 0
            with_evidence = 0
            for question in qa.questions:
                text, right = question.prompt(seed)
                turn = await agent.ask(text, commit=False)
                letter = parse_letter(turn.assistant)
                pack = agent.last_pack
                context = _norm("\n".join(s.text for s in pack.sections[1:])) if pack else ""
                shown = None
                if question.evidence:
                    with_evidence += 1
                    shown = _norm(question.evidence) in context
                    found += int(shown)
                ok = letter == right
                correct += int(ok)
                tokens += pack.tokens if pack else 0
                answers.append({"question": question.id, "bracket": name, "letter": letter,
                                "correct_letter": right, "ok": ok, "evidence_shown": shown,
                                "error": turn.error})
                done += 1
                if tick is not None:
                    tick(done, total)
            n = len(qa.questions)
            brackets[name] = {"share": share, "correct": correct, "total": n,
                              "accuracy": correct / n if n else None,
                              "evidence": found / with_evidence if with_evidence else None,
                              "with_evidence": with_evidence,
                              "context_tokens": tokens / n if n else None}
    finally:
        agent.config = base
    return {"brackets": brackets, "answers": answers, "questions": len(qa.questions)}
