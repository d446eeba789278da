"""LoCoEval-style query outlines (DESIGN.md, "Outline format"): loading and validation.

Unknown fields are kept out of the way, missing required ones are reported with
where they are missing, so other people's outlines load and broken ones say why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ITEM_TYPES = ("function_location", "internal_dependency", "external_dependency",
              "parameter_list", "core_functionality", "repo_knowledge", "logical_constraint",
              "coding_convention", "other")


BUILD_REPORT = "build-report.json"  # what ``engram replay build`` writes beside its outlines


class OutlineError(ValueError):
    """An outline that does not follow the format."""


@dataclass(frozen=True)
class Item:
    id: str
    type: str
    text: str
    locations: tuple[str, ...] = ()
    truth: bool = True
    unit: str = ""
    prereqs: tuple[str, ...] = ()
    as_built: str = ""  # the builder's text when ``text`` is a voice's (locoeval.voice)

    @property
    def built(self) -> str:
        """The item's text as the outline holds it (before any voice)."""
        return self.as_built or self.text


@dataclass(frozen=True)
class Sample:
    id: str
    namespace: str
    path: str
    signature: str
    tests: tuple[str, ...]
    items: tuple[Item, ...]

    @property
    def function(self) -> str:
        """The qualified name inside its file: ``Class.method`` or ``func``."""
        module = self.path.removesuffix(".py").replace("/", ".")
        name = self.namespace.removeprefix(module + ".") if self.namespace.startswith(
            module + ".") else self.namespace
        return name


@dataclass(frozen=True)
class Key:
    type: str  # location | keyword
    key: str


@dataclass(frozen=True)
class Query:
    id: str
    type: str
    contains: tuple[str, ...]
    keys: tuple[Key, ...]
    summary: str
    recap: bool = False
    topic: str = ""


@dataclass(frozen=True)
class Topic:
    id: str
    kind: str  # task | noise
    sample: str | None
    queries: tuple[Query, ...]


@dataclass(frozen=True)
class Tasks:
    topics: tuple[str, ...] = ()
    extract: dict[str, str] = field(default_factory=dict)
    generate: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Outline:
    id: str
    repo: str
    subset: str
    samples: tuple[Sample, ...]
    topics: tuple[Topic, ...]
    tasks: Tasks
    source: Path | None = None

    @property
    def items(self) -> dict[str, Item]:
        return {i.id: i for s in self.samples for i in s.items}

    def sample(self, sample_id: str) -> Sample:
        for sample in self.samples:
            if sample.id == sample_id:
                return sample
        raise OutlineError(f"{self.id}: no sample {sample_id!r}")

    def queries(self) -> list[Query]:
        """The conversation in order: the topics as listed, each topic's queries in order."""
        return [q for topic in self.topics for q in topic.queries]


def _need(data: Any, key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise OutlineError(f"{where}: missing {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise OutlineError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, "
                           f"got {type(value).__name__}")
    return value


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise OutlineError(f"{where}: expected a list")
    return tuple(str(v) for v in value)


def parse_outline(data: Any, source: Path | None = None) -> Outline:
    name = str(source) if source else "outline"
    oid = str(_need(data, "id", name, (str, int)))
    where = f"{name} ({oid})"
    samples = []
    for i, raw in enumerate(_need(data, "samples", where, list)):
        w = f"{where}.samples[{i}]"
        items = []
        for j, it in enumerate(_need(raw, "items", w, list)):
            wi = f"{w}.items[{j}]"
            kind = str(_need(it, "type", wi))
            if kind not in ITEM_TYPES:
                raise OutlineError(f"{wi}.type: {kind!r} is not one of {', '.join(ITEM_TYPES)}")
            items.append(Item(str(_need(it, "id", wi, (str, int))), kind, _need(it, "text", wi),
                              _strs(it.get("locations"), f"{wi}.locations"),
                              bool(it.get("truth", True)), str(it.get("unit", "")),
                              _strs(it.get("prereqs"), f"{wi}.prereqs")))
        samples.append(Sample(str(_need(raw, "id", w, (str, int))), _need(raw, "namespace", w),
                              _need(raw, "path", w), str(raw.get("signature", "")),
                              _strs(raw.get("tests"), f"{w}.tests"), tuple(items)))
    item_ids = {it.id for s in samples for it in s.items}
    sample_ids = {s.id for s in samples}
    topics = []
    for i, raw in enumerate(_need(data, "topics", where, list)):
        w = f"{where}.topics[{i}]"
        tid = str(_need(raw, "id", w, (str, int)))
        kind = str(raw.get("kind", "task"))
        if kind not in ("task", "noise"):
            raise OutlineError(f"{w}.kind: {kind!r} is neither 'task' nor 'noise'")
        sample = raw.get("sample")
        if sample is not None and str(sample) not in sample_ids:
            raise OutlineError(f"{w}.sample: no sample {sample!r}")
        queries = []
        for j, q in enumerate(_need(raw, "queries", w, list)):
            wq = f"{w}.queries[{j}]"
            contains = _strs(q.get("contains"), f"{wq}.contains")
            unknown = [c for c in contains if c not in item_ids]
            if unknown:
                raise OutlineError(f"{wq}.contains: unknown items {unknown}")
            keys = tuple(Key(str(k.get("type", "keyword")), str(k.get("key", "")))
                         for k in q.get("keys") or [] if isinstance(k, dict))
            queries.append(Query(str(_need(q, "id", wq, (str, int))), str(q.get("type", "")),
                                 contains, keys, str(q.get("summary", "")),
                                 bool(q.get("recap", False)), tid))
        topics.append(Topic(tid, kind, None if sample is None else str(sample), tuple(queries)))
    raw_tasks = data.get("tasks") or {}
    if not isinstance(raw_tasks, dict):
        raise OutlineError(f"{where}.tasks: expected an object")
    tasks = Tasks(_strs(raw_tasks.get("topics"), f"{where}.tasks.topics"),
                  {str(k): str(v) for k, v in (raw_tasks.get("extract") or {}).items()},
                  {str(k): str(v) for k, v in (raw_tasks.get("generate") or {}).items()})
    for kind, table in (("extract", tasks.extract), ("generate", tasks.generate)):
        missing = [k for k in table if k not in sample_ids]
        if missing:
            raise OutlineError(f"{where}.tasks.{kind}: unknown samples {missing}")
    return Outline(oid, str(data.get("repo", "")), str(data.get("subset", "")),
                   tuple(samples), tuple(topics), tasks, source)


def load_outline(path: Path) -> Outline:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OutlineError(f"{path}: cannot read an outline: {exc}") from exc
    return parse_outline(data, Path(path))


def load_outlines(path: Path) -> list[Outline]:
    """One outline file, or every ``*.json`` in a folder (sorted by name; the build report
    beside them is not an outline)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(f for f in path.glob("*.json") if f.name != BUILD_REPORT)
        if not files:
            raise OutlineError(f"{path}: no outline (*.json) in this folder")
        return [load_outline(f) for f in files]
    return [load_outline(path)]


def validate_rules(outline: Outline) -> list[str]:
    """Problems with the dispersion rules and the prerequisite order.

    Rule 1 (DESIGN.md, LoCoEval 3.1.3): in a unit, every distracting item comes before
    the true one, each distractor in a query of its own.
    Rule 2, as we read LoCoEval 3.1.3 (dispersion across queries): the items of one
    query come from distinct units, so a query never holds a distractor together with
    the true item of the same unit, nor two versions of one unit; the stale and the
    current version of a requirement are always asked apart. Recap queries restate
    earlier items and are not checked.
    Prerequisites: ``prereqs`` name units (or items) that must be asked before the
    unit's first item; they must form a DAG.
    Units are keyed by (sample, unit), so two samples may use the same unit names.
    """
    problems = []
    position: dict[str, int] = {}
    for n, query in enumerate(outline.queries()):
        for item in query.contains:
            position.setdefault(item, n)
    items = outline.items
    for query in outline.queries():
        if query.recap:
            continue
        seen: dict[tuple[str, str], str] = {}
        for item_id in query.contains:
            item = items[item_id]
            key = (_sample_of(outline, item_id), item.unit or item_id)
            if key in seen:
                problems.append(f"query {query.id}: {seen[key]} and {item_id} are both of "
                                f"unit {key[1]}")
            seen[key] = item_id
    for sample in outline.samples:
        units: dict[str, list[Item]] = {}
        for item in sample.items:
            if item.unit:
                units.setdefault(item.unit, []).append(item)
        for unit, members in units.items():
            truths = [i for i in members if i.truth and i.id in position]
            for d in (i for i in members if not i.truth and i.id in position):
                if truths and position[d.id] >= min(position[t.id] for t in truths):
                    problems.append(f"{sample.id}/{unit}: distractor {d.id} not before the truth")
            seen_at = [position[i.id] for i in members if not i.truth and i.id in position]
            if len(seen_at) != len(set(seen_at)):
                problems.append(f"{sample.id}/{unit}: two distractors in one query")
        problems += _prereq_problems(sample, units, position)
    return problems


def _sample_of(outline: Outline, item_id: str) -> str:
    for sample in outline.samples:
        if any(i.id == item_id for i in sample.items):
            return sample.id
    return ""


def _prereq_problems(sample: Sample, units: dict[str, list[Item]],
                     position: dict[str, int]) -> list[str]:
    by_id = {i.id: i for i in sample.items}

    def first(name: str) -> int | None:
        if name in by_id:
            return position.get(name)
        asked = [position[i.id] for i in units.get(name, []) if i.id in position]
        return min(asked) if asked else None

    graph: dict[str, set[str]] = {}
    for item in sample.items:
        node = item.unit or item.id
        graph.setdefault(node, set()).update(by_id[p].unit or p if p in by_id else p
                                             for p in item.prereqs)
    problems = []
    for node, needs in graph.items():
        start = first(node)
        for need in sorted(needs):
            if need not in graph:
                problems.append(f"{sample.id}/{node}: unknown prerequisite {need}")
                continue
            before = first(need)
            if start is not None and before is not None and before > start:
                problems.append(f"{sample.id}/{node}: asked before its prerequisite {need}")
    state: dict[str, int] = {}

    def cyclic(node: str) -> bool:
        state[node] = 1
        for need in graph.get(node, ()):
            if state.get(need) == 1 or (state.get(need) is None and need in graph
                                        and cyclic(need)):
                return True
        state[node] = 2
        return False

    if any(state.get(n) is None and cyclic(n) for n in sorted(graph)):
        problems.append(f"{sample.id}: prerequisites form a cycle")
    return problems
