"""SWE-ContextBench-style task chains: experience tasks, then related tasks that need them.

Format (JSON)::

    {"kind": "experience", "id", "repo",
     "experience": [task], "related": [task + {"depends_on": [ids], "relation"}]}
    task = {"id", "path", "function" (qualname), "signature", "tests": [node ids],
            "instruction", "facts": [what the developer says about it],
            "needs": [facts of its experience tasks it cannot be written without]}

An experience task is a conversation: the developer states its facts, then asks
for the function. A related task is one message (its instruction). The five
settings of the paper say what a related task gets of the earlier work.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SETTINGS = ("none", "free", "oracle", "free-summary", "oracle-summary")
SETTING_NAMES = {"none": "no experience", "free": "free experience reuse",
                 "oracle": "oracle experience reuse", "free-summary": "free summary reuse",
                 "oracle-summary": "oracle summary reuse"}


class ExperienceError(ValueError):
    """A chain file that does not follow the format."""


@dataclass(frozen=True)
class Task:
    id: str
    path: str
    function: str
    signature: str
    tests: tuple[str, ...]
    instruction: str
    facts: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    relation: str = ""
    needs: tuple[str, ...] = ()

    @property
    def namespace(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".") + "." + self.function

    @property
    def request(self) -> str:
        name = self.function.split(".")[-1]
        return (f"Write the complete function `{self.function}` for `{self.path}` now. Reply "
                f"with one Python code block defining `{name}`.")


@dataclass(frozen=True)
class ExperienceSet:
    id: str
    repo: str
    experience: tuple[Task, ...]
    related: tuple[Task, ...]
    source: Path | None = None
    kind: str = "experience"

    def task(self, task_id: str) -> Task:
        for task in (*self.experience, *self.related):
            if task.id == task_id:
                return task
        raise ExperienceError(f"{self.id}: no task {task_id!r}")


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ExperienceError(f"{where}: expected a list of strings")
    return tuple(value)


def _task(raw: Any, where: str) -> Task:
    if not isinstance(raw, dict):
        raise ExperienceError(f"{where}: expected an object")
    for key in ("id", "path", "function", "instruction"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ExperienceError(f"{where}: missing {key!r}")
    return Task(raw["id"], raw["path"], raw["function"], str(raw.get("signature", "")),
                _strs(raw.get("tests"), f"{where}.tests"), raw["instruction"],
                _strs(raw.get("facts"), f"{where}.facts"),
                _strs(raw.get("depends_on"), f"{where}.depends_on"),
                str(raw.get("relation", "")), _strs(raw.get("needs"), f"{where}.needs"))


def parse_experience(data: Any, path: Path) -> ExperienceSet:
    if not isinstance(data, dict) or data.get("kind") != "experience":
        raise ExperienceError(f"{path}: not a chain file ('kind': 'experience')")
    parts = {}
    for key in ("experience", "related"):
        raw = data.get(key)
        if not isinstance(raw, list) or not raw:
            raise ExperienceError(f"{path}: expected a non-empty {key!r} list")
        parts[key] = tuple(_task(t, f"{path}.{key}[{i}]") for i, t in enumerate(raw))
    known = {t.id for t in parts["experience"]}
    for task in parts["related"]:
        unknown = [d for d in task.depends_on if d not in known]
        if unknown or not task.depends_on:
            raise ExperienceError(f"{path}: related task {task.id} depends on "
                                  f"{unknown or 'nothing'}: not experience tasks")
    return ExperienceSet(str(data.get("id", path.stem)), str(data.get("repo", "")),
                         parts["experience"], parts["related"], path)


def load_experience(path: Path) -> ExperienceSet:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExperienceError(f"{path}: cannot read a chain file: {exc}") from exc
    return parse_experience(data, Path(path))


def task_json(task: Task) -> dict[str, Any]:
    data: dict[str, Any] = {"id": task.id, "path": task.path, "function": task.function,
                            "signature": task.signature, "tests": list(task.tests),
                            "instruction": task.instruction, "facts": list(task.facts)}
    if task.depends_on:
        data |= {"depends_on": list(task.depends_on), "relation": task.relation,
                 "needs": list(task.needs)}
    return data
