"""Iterative instruction tasks with per-turn tests: CodeIF-Bench's function-level JSONL as
published, or our JSON ({"tasks": [{"id", "turns": [{"instruction", "tests": [assert
snippets]}]}]}). A CodeIF-Bench task is its ``prompt`` (turn 0, tests ``test``), then its
``requirements`` in the ``multi-turn`` order, then the requirements that order leaves out;
each requirement's ``unit_test`` may be a list of snippets or one snippet as a string."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.core.errors import SourceError


@dataclass(frozen=True)
class Step:
    instruction: str
    tests: tuple[str, ...]
    category: str | None = None  # CodeIF-Bench's requirement category; None: the base prompt
    listed: bool = True  # False: a requirement the task's ``multi-turn`` order leaves out


@dataclass(frozen=True)
class Iterative:
    id: str
    steps: tuple[Step, ...]
    kind: str = "iterative"


def as_tests(value: Any) -> tuple[str, ...]:
    """A test list as CodeIF-Bench writes it: a list of snippets, or one snippet as a string
    (one test, not one test per character)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, list | tuple):
        return tuple(str(t) for t in value)
    raise TypeError(f"tests must be a string or a list, not {type(value).__name__}")


def _codeif_task(data: dict[str, Any], where: str) -> Iterative:
    """The base prompt, then the requirements in the task's ``multi-turn`` order, then the
    requirements that order leaves out (in the order the task lists them)."""
    try:
        steps = [Step(str(data["prompt"]), as_tests(data.get("test")))]
        requirements = data.get("requirements") or {}
        order = list(data.get("multi-turn") or [])
        for category in order:
            if category not in requirements:
                raise KeyError(category)
        unlisted = [c for c in requirements if c not in order]
        for category in [*order, *unlisted]:
            req = requirements[category]
            steps.append(Step(str(req["requirement"]), as_tests(req.get("unit_test")),
                              str(category), category in order))
    except (KeyError, TypeError) as exc:
        raise SourceError(f"{where}: not a CodeIF-Bench task: missing {exc}") from exc
    return Iterative(str(data.get("task_id", where)), tuple(steps))


def _own_task(data: dict[str, Any], where: str) -> Iterative:
    steps = []
    for i, turn in enumerate(data.get("turns") or []):
        if not isinstance(turn, dict) or "instruction" not in turn:
            raise SourceError(f"{where}.turns[{i}]: missing 'instruction'")
        try:
            steps.append(Step(str(turn["instruction"]), as_tests(turn.get("tests"))))
        except TypeError as exc:
            raise SourceError(f"{where}.turns[{i}]: {exc}") from exc
    if not steps:
        raise SourceError(f"{where}: no turns")
    return Iterative(str(data.get("id", where)), tuple(steps))


def load_iterative(path: Path) -> list[Iterative]:
    text = path.read_text("utf-8")
    if path.suffix == ".jsonl":
        tasks = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}:{n}: not JSON: {exc}") from exc
            tasks.append(_codeif_task(data, f"{path}:{n}"))
        return tasks
    data = json.loads(text)
    items = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise SourceError(f"{path}: expected {{'tasks': [...]}}")
    return [_own_task(t, f"{path}.tasks[{i}]") for i, t in enumerate(items)]
