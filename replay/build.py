"""The outline builder: LoCoEval-style outlines from target functions that have tests.

Per target, static analysis (tree-sitter) gives items of types 1-4 — location,
internal dependencies, external dependencies, parameter list — and the docstring
the core functionality (or the LLM, when a model is given). Distracting items are
mutations: another plausible location, a changed parameter list, a negated
constraint. Each unit's distractors come before its true item, each in its own
query. A sample's queries are cut into 1 topic (single-hop) or 2-3 (multi-hop);
the topics of the k samples of an outline are merged k-way at random (each
sample's order kept), noise topics are inserted, every sample ends with a recap,
and the whole lands between 30 and 70 queries. Everything is drawn from one RNG
seeded per outline: a seed gives the same outlines.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from memory.backends._codeast import calls
from memory.chunks import _docstring, _parser

MIN_QUERIES, MAX_QUERIES = 30, 70
NOISE = (
    "How do I squash my last three commits in git?",
    "What is a good naming scheme for feature branches?",
    "Can you explain what a Python context manager is?",
    "How should I write a useful commit message?",
    "What is the difference between a list and a tuple?",
    "How do I profile a slow Python function?",
    "Should tests live next to the code or in a tests folder?",
    "What does `git rebase --onto` do?",
    "How do virtual environments work?",
    "What is the walrus operator good for?",
    "How do I pin dependencies reproducibly?",
    "What are type hints checked by, if anything?",
)
NEGATIONS = (
    (r"\bRaises\b", "Never raises"), (r"\braises\b", "never raises"),
    (r"\bat most\b", "at least"), (r"\bfewer\b", "more"),
    (r"\bpositive\b", "negative"), (r"\bnot including\b", "including"),
    (r"\bupper-case\b", "lower-case"), (r"\blower-case\b", "upper-case"),
    (r"\bsorted\b", "unsorted"), (r"\bkeeping order\b", "in any order"),
    (r"\bnon-negative\b", "negative"), (r"\bempty\b", "non-empty"),
)


class BuildError(ValueError):
    """A target that cannot be analysed."""


@dataclass(frozen=True)
class Target:
    path: str
    qualname: str
    tests: tuple[str, ...]

    @property
    def namespace(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".") + "." + self.qualname


@dataclass
class Analysis:
    signature: str
    params: list[str]
    doc: str
    internal: list[tuple[str, str]]  # (name, path) defined in the repository
    external: list[tuple[str, str]]  # (name, module) imported from outside


def load_targets(path: Path) -> list[Target]:
    """``[{"location": "path::Qual.name", "tests": ["tests/x.py::test_y"]}, ...]``"""
    data = json.loads(Path(path).read_text("utf-8"))
    targets = []
    for i, row in enumerate(data):
        location = str(row.get("location", ""))
        file, sep, qual = location.partition("::")
        if not sep or not qual:
            raise BuildError(f"{path}[{i}]: location must be path::Qual.name, got {location!r}")
        tests = tuple(str(t) for t in row.get("tests") or [])
        if not tests:
            raise BuildError(f"{path}[{i}]: {location} has no tests")
        targets.append(Target(file, qual, tests))
    return targets


def _definitions(repo: Path) -> dict[str, str]:
    """Top-level function/class names of the repository's Python files -> path."""
    names: dict[str, str] = {}
    for file in sorted(repo.rglob("*.py")):
        rel = file.relative_to(repo).as_posix()
        if rel.startswith(("tests/", ".")) or "/." in rel:
            continue
        root = _parser().parse(file.read_bytes()).root_node
        for node in root.named_children:
            if node.type in ("function_definition", "class_definition"):
                name = node.child_by_field_name("name")
                if name is not None:
                    names.setdefault(name.text.decode(), rel)
    return names


def _imports(source: bytes, repo_modules: set[str]) -> dict[str, str]:
    """Names the module imports from outside the repository -> module."""
    out: dict[str, str] = {}
    for node in _parser().parse(source).root_node.named_children:
        text = node.text.decode()
        if node.type == "import_statement":
            for module in re.findall(r"([\w.]+)(?:\s+as\s+\w+)?", text.removeprefix("import")):
                if module.split(".")[0] not in repo_modules:
                    out[module.split(".")[0]] = module
        elif node.type == "import_from_statement":
            match = re.match(r"from\s+([\w.]+)\s+import\s+\(?([^)]*)\)?", text, re.S)
            if match and match.group(1).split(".")[0] not in repo_modules:
                for name in re.findall(r"(\w+)(?:\s+as\s+(\w+))?", match.group(2)):
                    out[name[1] or name[0]] = match.group(1)
    return out


def _function(source: bytes, qualname: str) -> Any:
    node: Any = _parser().parse(source).root_node
    for depth, name in enumerate(qualname.split(".")):
        scope = node if depth == 0 else node.child_by_field_name("body")
        found = None
        for child in scope.named_children if scope is not None else []:
            target = child.child_by_field_name("definition") \
                if child.type == "decorated_definition" else child
            if target is not None and target.type in ("function_definition",
                                                      "class_definition"):
                got = target.child_by_field_name("name")
                if got is not None and got.text.decode() == name:
                    found = target
        if found is None:
            raise BuildError(f"no definition {qualname!r}")
        node = found
    return node


def analyse(repo: Path, target: Target, definitions: dict[str, str]) -> Analysis:
    file = repo / target.path
    if not file.is_file():
        raise BuildError(f"{target.path} not found in {repo}")
    source = file.read_bytes()
    node = _function(source, target.qualname)
    body = node.child_by_field_name("body")
    params_node = node.child_by_field_name("parameters")
    params = [p.text.decode() for p in params_node.named_children] if params_node else []
    signature = " ".join(source[node.start_byte:body.start_byte].decode().split()).rstrip(":")
    code = node.text.decode()
    used = set(re.findall(r"\b\w+\b", code))
    name = target.qualname.split(".")[-1]
    internal = [(n, definitions[n]) for n in sorted(calls(code))
                if n in definitions and n != name]
    repo_modules = {p.split("/")[0].removesuffix(".py") for p in definitions.values()}
    external = [(n, m) for n, m in sorted(_imports(source, repo_modules).items()) if n in used]
    doc = " ".join(_docstring(source, body).split())
    return Analysis(signature, params, doc, internal, external)


def _negate(sentence: str) -> str | None:
    for pattern, replacement in NEGATIONS:
        if re.search(pattern, sentence):
            return re.sub(pattern, replacement, sentence, count=1)
    return None


def sample_items(target: Target, info: Analysis, paths: list[str], rng: random.Random,
                 sid: str, core: str | None = None) -> list[dict[str, Any]]:
    """The items of one sample, unit by unit, distractors before the truth."""
    qual, loc = target.qualname, f"{target.path}::{target.qualname}"
    items: list[dict[str, Any]] = []

    def add(unit: str, kind: str, text: str, truth: bool, locations: list[str]) -> None:
        items.append({"id": f"{sid}-{len(items)}", "type": kind, "text": text,
                      "locations": locations, "truth": truth, "unit": f"{sid}:{unit}",
                      "prereqs": []})

    others = [p for p in paths if p != target.path]
    if others:
        wrong = rng.choice(others)
        add("location", "function_location", f"`{qual}` belongs in `{wrong}`.", False,
            [f"{wrong}::{qual}"])
    add("location", "function_location", f"`{qual}` belongs in `{target.path}`.", True, [loc])
    shown = ", ".join(info.params) or "no parameters"
    mutated = list(info.params)
    if len(mutated) > 1 and mutated[0] != "self":
        mutated = mutated[:-1]
    else:
        mutated = [*mutated, "strict=False"]
    # a distractor links no code of its own: the stale claim is in its text
    add("params", "parameter_list", f"`{qual}` takes ({', '.join(mutated)}).", False, [])
    add("params", "parameter_list", f"`{qual}` takes ({shown}).", True, [loc])
    sentences = [s.strip() for s in re.split(r"(?<=[.;])\s+", core or info.doc) if s.strip()]
    if sentences:
        negatable = [(i, n) for i, s in enumerate(sentences) if (n := _negate(s))]
        if negatable:
            i, negated = negatable[0]
            add("constraint", "logical_constraint", f"For `{qual}`: {negated}", False, [])
            add("constraint", "logical_constraint", f"For `{qual}`: {sentences[i]}", True, [])
            sentences = [s for j, s in enumerate(sentences) if j != i]
        if sentences:
            add("core", "core_functionality", f"`{qual}` should: {' '.join(sentences)}", True,
                [])
    for name, path in info.internal[:4]:
        add(f"internal:{name}", "internal_dependency",
            f"`{qual}` should reuse `{name}` from `{path}`.", True, [f"{path}::{name}"])
    for name, module in info.external[:2]:
        add(f"external:{name}", "external_dependency",
            f"`{qual}` needs `{name}` from the `{module}` module.", True, [])
    return items


def _queries(items: list[dict[str, Any]], rng: random.Random, sid: str) -> list[dict[str, Any]]:
    """Queries in unit order: each distractor alone, the truth after it; other true items
    grouped one or two to a query."""
    queries: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def emit(group: list[dict[str, Any]], summary: str) -> None:
        keys = [{"type": "location", "key": loc} for it in group for loc in it["locations"]]
        queries.append({"id": f"{sid}-q{len(queries)}", "type": group[0]["type"],
                        "contains": [it["id"] for it in group], "keys": keys[:3],
                        "summary": summary, "recap": False})

    summaries = {"function_location": "Where this function goes.",
                 "parameter_list": "About its parameters.",
                 "logical_constraint": "A rule it has to follow.",
                 "core_functionality": "What it should do.",
                 "internal_dependency": "Reuse what the repository has.",
                 "external_dependency": "Libraries it needs."}
    for item in items:
        if not item["truth"]:
            if pending:
                emit(pending, summaries[pending[0]["type"]])
                pending = []
            emit([item], summaries[item["type"]])
            continue
        pending.append(item)
        if len(pending) >= rng.choice((1, 2)):
            emit(pending, summaries[pending[0]["type"]])
            pending = []
    if pending:
        emit(pending, summaries[pending[0]["type"]])
    return queries


def _split(queries: list[dict[str, Any]], parts: int, rng: random.Random) -> list[list[dict]]:
    parts = max(1, min(parts, len(queries)))
    cuts = sorted(rng.sample(range(1, len(queries)), parts - 1)) if parts > 1 else []
    bounds = [0, *cuts, len(queries)]
    return [queries[a:b] for a, b in pairwise(bounds)]


def build_outline(repo: Path, targets: list[Target], oid: str, seed: int,
                  definitions: dict[str, str] | None = None,
                  cores: dict[str, str] | None = None,
                  repo_ref: str | None = None) -> dict[str, Any]:
    """One outline over ``targets`` (k = len(targets) samples)."""
    rng = random.Random(f"{seed}:{oid}")
    definitions = definitions if definitions is not None else _definitions(repo)
    paths = sorted(set(definitions.values()))
    samples, topic_lists, hops = [], [], []
    for n, target in enumerate(targets):
        sid = f"s{n + 1}"
        info = analyse(repo, target, definitions)
        items = sample_items(target, info, paths, rng, sid, (cores or {}).get(target.namespace))
        samples.append({"id": sid, "namespace": target.namespace, "path": target.path,
                        "signature": info.signature, "tests": list(target.tests),
                        "items": items})
        queries = _queries(items, rng, sid)
        truths = [it["id"] for it in items if it["truth"]]
        queries.append({"id": f"{sid}-recap", "type": "recap",
                        "contains": rng.sample(truths, min(2, len(truths))), "keys": [],
                        "summary": f"where we are with `{target.qualname}`", "recap": True})
        parts = rng.choice((1, 2, 3))
        hops.append(parts)
        topic_lists.append([{"id": f"{sid}-t{i}", "kind": "task", "sample": sid, "queries": qs}
                            for i, qs in enumerate(_split(queries, parts, rng))])
    merged = []
    heads = [list(t) for t in topic_lists]
    while any(heads):  # k-way random merge, each sample's topics in order
        choice = rng.choice([i for i, h in enumerate(heads) if h])
        merged.append(heads[choice].pop(0))
    count = sum(len(t["queries"]) for t in merged)
    noise_pool = list(NOISE)
    rng.shuffle(noise_pool)
    noise_n = 0
    while count < MIN_QUERIES or noise_n < 2:
        size = min(rng.choice((1, 2, 3)), max(1, MAX_QUERIES - count))
        queries = [{"id": f"n{noise_n}-q{j}", "type": "other", "contains": [], "keys": [],
                    "summary": noise_pool[(noise_n * 3 + j) % len(noise_pool)],
                    "recap": False} for j in range(size)]
        merged.insert(rng.randrange(len(merged) + 1),
                      {"id": f"n{noise_n}", "kind": "noise", "sample": None,
                       "queries": queries})
        noise_n += 1
        count += size
    if count > MAX_QUERIES:
        raise BuildError(f"{oid}: {count} queries, more than {MAX_QUERIES}; use fewer targets")
    qual = {f"s{n + 1}": t.qualname.split(".")[-1] for n, t in enumerate(targets)}
    names = {f"s{n + 1}": t.qualname for n, t in enumerate(targets)}
    return {
        "id": oid, "repo": repo_ref or str(repo),
        "subset": "multi-hop" if max(hops) > 1 else "single-hop",
        "samples": samples, "topics": merged,
        "tasks": {
            "topics": [f"implementing `{names[s['id']]}`" for s in samples]
            + [t["queries"][0]["summary"] for t in merged if t["kind"] == "noise"],
            "extract": {s["id"]: f"List everything we settled about `{names[s['id']]}`, one "
                                 "fact per line." for s in samples},
            "generate": {s["id"]: f"Write the complete function `{names[s['id']]}` for "
                                  f"`{s['path']}` now, following everything we settled. Reply "
                                  f"with one Python code block defining `{qual[s['id']]}`."
                         for s in samples},
        },
    }


def build_outlines(repo: Path, targets: list[Target], count: int, seed: int,
                   cores: dict[str, str] | None = None,
                   repo_ref: str | None = None) -> list[dict[str, Any]]:
    """``count`` outlines with k = 1, 2, 3 samples in turn, targets drawn per seed."""
    rng = random.Random(seed)
    definitions = _definitions(repo)
    outlines = []
    for n in range(count):
        k = min(1 + n % 3, len(targets))
        chosen = rng.sample(targets, k)
        outlines.append(build_outline(repo, chosen, f"{repo.name}-{n + 1:02d}-k{k}", seed,
                                      definitions, cores, repo_ref))
    return outlines
