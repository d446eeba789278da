"""CodeIF-Bench's grading rules, as facts about its published harness (function level).

- Code preparation (``prepare="codeif"``): the first fenced block opened with
  ```` ```python ```` (else the whole answer), docstrings opened on an indented line of
  their own (``    \"\"\"`` + newline) removed, blank lines removed. ``prepare="engram"``:
  every fenced block of the answer, joined (engram's own harness).
- Which tests grade the answer of turn n (turn 0 is the base prompt):
  ``category`` (the benchmark's per-requirement mode): the base tests + that
  requirement's tests, Functionality Extension's tests alone;
  ``cumulative`` (its multi-turn mode): the base tests + the tests of turns 1..n,
  Functionality Extension skipped (its answer is not graded, its tests never join);
  ``all`` (engram's replay): every test of turns 0..n.
- IA / CA / IFR per turn over the tests an answer was graded with; a turn with no tests
  of its own has no IA (left out, not 0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.backends.codemem.syntax import code_blocks
from replay.codeif.source import Iterative

FUNCTIONALITY_EXTENSION = "Functionality Extension"
CATEGORIES = ("Input-Output Conditions", "Exception Handling", "Edge Case Handling",
              FUNCTIONALITY_EXTENSION, "Annotation Coverage", "Code Complexity",
              "Code Standard")
MODES = ("all", "category", "cumulative")
PREPARES = ("engram", "codeif")

_PYTHON_FENCE = re.compile(r"```python\r?\n(.*?)```", re.S)
_INDENTED_DOCSTRING = re.compile(r'    """\r?\n.*?"""', re.S)


def codeif_code(answer: str) -> str:
    """The code CodeIF-Bench's harness runs for ``answer``."""
    found = _PYTHON_FENCE.search(answer)
    code = found.group(1) if found else answer
    code = _INDENTED_DOCSTRING.sub("", code)
    return "\n".join(line for line in code.splitlines() if line.strip())


def engram_code(answer: str) -> str:
    """The code engram's harness runs for ``answer``: its fenced blocks, joined."""
    return "\n\n".join(code_blocks(answer))


def prepared(answer: str, prepare: str) -> str:
    if prepare == "codeif":
        return codeif_code(answer)
    if prepare == "engram":
        return engram_code(answer)
    raise ValueError(f"unknown code preparation {prepare!r} (one of {', '.join(PREPARES)})")


@dataclass(frozen=True)
class IterativeOptions:
    """How iterative turns are graded."""

    mode: str = "all"  # all | category | cumulative
    prepare: str = "engram"  # engram | codeif

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r} (one of {', '.join(MODES)})")
        if self.prepare not in PREPARES:
            raise ValueError(f"unknown code preparation {self.prepare!r}")


def is_extension(task: Iterative, turn: int) -> bool:
    return turn > 0 and task.steps[turn].category == FUNCTIONALITY_EXTENSION


def graded_turns(task: Iterative, turn: int, mode: str) -> list[int] | None:
    """The turns whose tests grade the answer of ``turn``; None: the mode skips it."""
    if not 0 <= turn < len(task.steps):
        raise IndexError(f"task {task.id} has no turn {turn}")
    if mode == "all":
        return list(range(turn + 1))
    if mode == "category":
        return [turn] if turn == 0 or is_extension(task, turn) else [0, turn]
    if mode == "cumulative":
        if is_extension(task, turn):
            return None
        return [n for n in range(turn + 1) if not is_extension(task, n)]
    raise ValueError(f"unknown mode {mode!r}")


def test_ids(task: Iterative, turns: Sequence[int]) -> list[tuple[str, str]]:
    """(id ``"turn.index"``, snippet) of the tests of ``turns``, in order."""
    return [(f"{n}.{i}", test) for n in turns for i, test in enumerate(task.steps[n].tests)]


def own_ids(task: Iterative, turn: int) -> list[str]:
    return [f"{turn}.{i}" for i in range(len(task.steps[turn].tests))]


@dataclass(frozen=True)
class Follow:
    """CodeIF-Bench's instruction-following scores of one answer (None: not defined)."""

    ia: float | None  # the turn's own tests all pass (None: the turn has no tests)
    ca: float | None  # share of the graded tests of turns 0..n passed
    ifr: float | None  # share of the tests passed at an earlier turn that now fail


def follow(turn_tests: Sequence[Sequence[str]], graded: Sequence[Sequence[str] | None],
           passed: Sequence[set[str] | None]) -> list[Follow | None]:
    """Per turn of one conversation: ``turn_tests[n]`` the ids introduced at turn n,
    ``graded[n]`` the ids answer n was graded with (None: not graded), ``passed[n]`` the
    ids it passed. An ungraded turn gives None and leaves the earlier passes as they are."""
    out: list[Follow | None] = []
    ever: set[str] = set()
    for own, ids, ok in zip(turn_tests, graded, passed, strict=True):
        if ids is None or ok is None:
            out.append(None)
            continue
        scope = set(ids)
        ia = (1.0 if set(own) <= ok else 0.0) if own else None
        ca = len(scope & ok) / len(scope) if scope else None
        still = ever & scope
        ifr = len(still - ok) / len(still) if still else None
        out.append(Follow(ia, ca, ifr))
        ever |= ok & scope
    return out
