"""What a replay re-drives: recorded transcripts, outlines, iterative instruction tasks.

- ``recorded``: the user turns of a transcript (``memory.transcript`` format), or of a
  Claude Code, Codex CLI or Aider session (``replay.foreign``: tool calls and results
  kept as each turn's context, not as turns).
- ``outline``: a LoCoEval-style outline (a file or a folder of them), voiced by a mock user.
- ``qa``: multiple-choice questions about a repository (``replay.qa``: engram's format
  or LongCodeBench's), asked at four context-length brackets.
- ``experience``: SWE-ContextBench-style task chains (``replay.experience``).
- ``iterative``: instruction sequences with per-turn tests — CodeIF-Bench's
  function-level JSONL as published, or our JSON ({"tasks": [{"id", "turns":
  [{"instruction", "tests": [assert snippets]}]}]}). A CodeIF-Bench task is its
  ``prompt`` (turn 0, tests ``test``), then its ``requirements`` in the ``multi-turn``
  order, then the requirements that order leaves out; each requirement's ``unit_test``
  may be a list of snippets or one snippet as a string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.transcript import read_transcript
from replay.experience import ExperienceError, ExperienceSet, parse_experience
from replay.outline import Outline, OutlineError, load_outlines
from replay.qa import QAError, QASet, is_lcb, parse_qa


class SourceError(ValueError):
    """A source that cannot be read as any of the kinds."""


@dataclass(frozen=True)
class Recorded:
    id: str
    queries: tuple[str, ...]
    repo: str
    kind: str = "recorded"
    origin: str = "engram"  # or the tool whose session this is: claude-code, codex, aider
    context: tuple[tuple[str, ...], ...] = ()  # per query: tool calls/results that followed
    skipped: int = 0  # records skipped while reading (malformed or unknown)


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


Source = Recorded | Outline | Iterative | QASet | ExperienceSet


def load_recorded(path: Path) -> Recorded:
    reading = read_transcript(path)
    turns = reading.turns
    if not turns:
        raise SourceError(f"{path}: no turns to replay (skipped lines: {len(reading.problems)})")
    session = reading.session
    queries = tuple(t.user for t in sorted(turns, key=lambda t: t.index) if t.user.strip())
    return Recorded(session.id if session else path.stem, queries,
                    session.repo if session else "")


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


def load_foreign(path: Path, tool: str) -> Recorded:
    from replay.foreign import ForeignError, read_foreign
    from replay.tasks import safe_name

    try:
        session = read_foreign(path, tool)
    except (ForeignError, OSError) as exc:
        raise SourceError(str(exc)) from exc
    origin = f"{tool} {session.version}".strip()
    return Recorded(safe_name(session.id), tuple(session.queries), session.repo,
                    origin=origin, context=tuple(tuple(c) for c in session.context),
                    skipped=session.skipped)


def load_source(path: Path) -> list[Source]:
    """Whatever ``path`` holds: a transcript, an outline (or a folder of them), a task file."""
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if path.is_dir():
        return list(load_outlines(path))
    from replay.foreign import sniff

    tool = sniff(path)
    if tool is not None:
        return [load_foreign(path, tool)]
    if path.suffix == ".jsonl":
        first = next((line for line in path.read_text("utf-8").splitlines() if line.strip()), "")
        try:
            head = json.loads(first)
        except json.JSONDecodeError:
            head = {}
        if isinstance(head, dict) and "prompt" in head and "multi-turn" in head:
            return list(load_iterative(path))
        return [load_recorded(path)]
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{path}: cannot read: {exc}") from exc
    if isinstance(data, dict) and data.get("kind") == "experience":
        try:
            return [parse_experience(data, path)]
        except ExperienceError as exc:
            raise SourceError(str(exc)) from exc
    if (isinstance(data, dict) and data.get("kind") == "qa") or is_lcb(data):
        try:
            return list(parse_qa(data, path))
        except QAError as exc:
            raise SourceError(str(exc)) from exc
    if isinstance(data, dict) and "samples" in data and "topics" in data:
        try:
            return list(load_outlines(path))
        except OutlineError as exc:
            raise SourceError(str(exc)) from exc
    if (isinstance(data, dict) and "tasks" in data) or isinstance(data, list):
        return list(load_iterative(path))
    raise SourceError(f"{path}: neither a transcript, an outline nor an iterative task file")
