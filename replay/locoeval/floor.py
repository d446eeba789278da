"""How low ``ctx stale`` can go on a set of outlines without telling a replaced
dependency from an added one.

A function may use several helpers and imports, so "`f` should reuse `g`" after "`f`
should reuse `h`" is one more dependency as often as another one; at LoCoEval's
condition no revision cue says which. A memory can still tell some: a name the
function's module neither defines nor imports (nor imports the module of) is a plan
changed rather than a tool at hand. What it cannot tell from what was said is a stale
dependency the module already has at hand.

``stale_floor`` is the ctx stale of a memory that shows every true item of each sample
and, of its stale items, only those ``kept`` says it keeps (by default every
dependency); ``at_hand`` keeps the ones the target's module already knows: the floor of
a memory that reads what was said and the repository, and guesses nothing else.
"""

from __future__ import annotations

import ast
import re
import statistics
from collections.abc import Callable, Iterable
from pathlib import Path

from replay.locoeval.outline import Item, Sample

DEPENDENCY_TYPES = ("internal_dependency", "external_dependency")
SPAN = re.compile(r"`([^`]+)`")
Kept = Callable[[Sample, Item], bool]


def dependency(sample: Sample, item: Item) -> bool:
    return item.type in DEPENDENCY_TYPES


def stale_floor(samples: Iterable[Sample], kept: Kept = dependency) -> float | None:
    """The mean over samples (as ctx stale is taken) of stale items kept / (true items
    + stale items kept); None without samples."""
    shares = []
    for sample in samples:
        true = sum(1 for i in sample.items if i.truth)
        stale = sum(1 for i in sample.items if not i.truth and kept(sample, i))
        shares.append(stale / (true + stale) if true + stale else 0.0)
    return statistics.fmean(shares) if shares else None


def module_knows(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the names a module binds at its top level: definitions, assignments, imported
    names; the modules it imports whole, dotted, ``from pkg import m`` as ``pkg.m``) of
    Python source (empty when it does not parse). Written apart from ``cards``' own
    reading of a module (``ground.module_names``) on purpose: the reference a backend is
    measured against does not move with that backend's code."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset(), frozenset()
    names: set[str] = set()
    modules: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                modules.add(alias.name)
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):  # its names, which may be modules
            names.update(a.asname or a.name for a in node.names)
            modules.update(".".join(p for p in (node.module, a.name) if p)
                           for a in node.names if not a.asname)
    return frozenset(names), frozenset(modules)


def _dotted(module: str) -> str:
    """A module as the builder says it, a path ("pkg/m.py") or a dotted name, dotted."""
    if module.endswith(".py"):
        module = module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return module.strip(".")


def at_hand(repo: Path) -> Kept:
    """Keeps a stale dependency whose name the target's module (its file in ``repo``)
    already knows: it binds the name, or imports whole the module the item says it comes
    from.
    The name and module are the item's code spans as the builder words them (the
    subject first), whatever voice said it."""
    known: dict[str, tuple[frozenset[str], frozenset[str]]] = {}

    def keep(sample: Sample, item: Item) -> bool:
        if item.type not in DEPENDENCY_TYPES:
            return False
        spans = SPAN.findall(item.built)
        if len(spans) < 2:
            return False
        if sample.path not in known:
            path = repo / sample.path
            known[sample.path] = module_knows(
                path.read_text(encoding="utf-8", errors="replace") if path.is_file() else "")
        names, modules = known[sample.path]
        name = spans[1].strip("()").split(".")[-1]
        source = _dotted(spans[2]) if len(spans) > 2 else ""
        return name in names or (bool(source) and any(
            source == m or source.endswith(f".{m}") for m in modules))

    return keep
