"""Grading an iterative answer: its code against the tests its turn is graded with."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from replay.codeif._codeif import (
    IterativeOptions,
    follow,
    graded_turns,
    own_ids,
    prepared,
    test_ids,
)
from replay.codeif.source import Iterative
from replay.sandbox.asserts import run_tests
from replay.sandbox.sandbox import Limits


def passed_tests(answer: str, tests: list[str], limits: Limits,
                 prepare: str = "engram") -> set[int]:
    """Indices of ``tests`` the answer's code passes, the code taken from the answer as
    engram's harness does (``engram``) or as CodeIF-Bench's does (``codeif``)."""
    return run_tests(prepared(answer, prepare), tests, limits)


@dataclass(frozen=True)
class Graded:
    """One iterative answer, graded."""

    introduced: list[str]  # ids of the tests the turn brings
    graded: list[str] | None  # ids the answer was graded with (None: the mode skips it)
    passed: set[str] | None  # ids it passed

    @property
    def verdict(self) -> bool | None:
        """The benchmark's verdict: every graded test passed (None: not graded)."""
        if self.graded is None or self.passed is None or not self.graded:
            return None
        return set(self.graded) <= self.passed


def grade_turn(task: Iterative, turn: int, answer: str, limits: Limits,
               options: IterativeOptions | None = None) -> Graded:
    """Run the tests that grade the answer of ``turn`` under ``options`` (blocking)."""
    options = options or IterativeOptions()
    introduced = own_ids(task, turn)
    turns = graded_turns(task, turn, options.mode)
    if turns is None:
        return Graded(introduced, None, None)
    pairs = test_ids(task, turns)
    ok = passed_tests(answer, [t for _, t in pairs], limits, options.prepare)
    return Graded(introduced, [i for i, _ in pairs], {pairs[i][0] for i in ok})


async def iterative_turn(task: Iterative, turn: int, answer: str, limits: Limits,
                         options: IterativeOptions | None = None) -> tuple[list[str], set[str]]:
    """(test ids introduced at ``turn``, ids of the graded tests the answer passes)."""
    graded = await asyncio.to_thread(grade_turn, task, turn, answer, limits, options)
    return graded.introduced, graded.passed or set()


def iterative_scores(graded: list[Graded]) -> dict[str, Any]:
    """A conversation's IA / CA / IFR: per turn under ``turns`` (None where undefined: a
    turn with no tests has no IA, an ungraded turn nothing), and as flat lists of the
    defined values for pooling. The flat ``ifr`` keeps a first slot for the first turn,
    where nothing can be forgotten (0.0), which pooled reports leave out."""
    scores = follow([g.introduced for g in graded], [g.graded for g in graded],
                    [g.passed for g in graded])
    per_turn = {key: [getattr(s, key) if s is not None else None for s in scores]
                for key in ("ia", "ca", "ifr")}
    flat = {k: [v for v in values if v is not None] for k, values in per_turn.items()}
    flat["ifr"] = [0.0, *(v for v in per_turn["ifr"][1:] if v is not None)] if graded else []
    return {**flat, "turns": per_turn, "verdicts": [g.verdict for g in graded]}
