"""The outline builder: LoCoEval-style outlines (3.1.2-3.1.4) from target functions with tests.

Per target, static analysis (tree-sitter, ``_analyse``) gives the true items, one unit
each: location, parameter list, core functionality and logical constraints (from the
docstring, or from the LLM when a model is given; the whole definition is deleted from
the agent's copy, so neither leaks), internal and external dependencies. Units get
prerequisite relations (``prereqs``: unit ids, a DAG: location first, the rest after what
they build on) and are asked in a random topological order. A random half of the true
items is mutated, every type eligible: each mutated unit gets 1-3 distracting items
(``_distract``), asked before its true item, each in its own query; a query never holds
two items of one unit. A sample's queries form 1 topic (single-hop) or 2-3 (multi-hop,
never adjacent); 1-2 recap queries per sample, asking about the previous answer, go at
random places but never first in a topic. The samples' topics are merged at random and
noise topics about the repository's other real functions and files (``_noise``) fill the
outline to its length l in [30, 70). ``grid`` gives the paper's even grid: 4 intervals
of l x k in 1..4, both subsets for every k. One RNG seeded per build: a seed gives the
same outlines.
"""

from __future__ import annotations

import math
import random
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

from replay.locoeval._analyse import (
    Analysis,
    BuildError,
    RepoFacts,
    Target,
    analyse,
    load_targets,
    repo_facts,
)
from replay.locoeval._contradict import CONSTRAINT, REVISION_WORDS
from replay.locoeval._distract import (
    REAL_TYPES,
    Unit,
    pick,
    real_candidates,
    real_fallbacks,
    template_candidates,
)
from replay.locoeval._noise import noise_topics, subjects
from replay.locoeval._prose import cut, doc_sentences, split_sentences

__all__ = ["BuildError", "Target", "build_outline", "build_outlines", "grid_plan",
           "load_targets", "repo_facts", "true_units"]

MIN_QUERIES, MAX_QUERIES = 30, 70  # l in [MIN_QUERIES, MAX_QUERIES)
L_BINS = ((30, 40), (40, 50), (50, 60), (60, 70))
K_VALUES = (1, 2, 3, 4)
SUBSETS = ("single-hop", "multi-hop")
MAX_INTERNAL, MAX_EXTERNAL, MAX_CONSTRAINTS = 4, 2, 2
MAX_NOISE_TOPIC = 5
MAX_CORE = 240  # characters of prose in the core functionality item (whole sentences)
SUMMARIES = {
    "function_location": "Where `{qual}` should live.",
    "parameter_list": "The parameters of `{qual}`.",
    "core_functionality": "What `{qual}` should do.",
    "logical_constraint": "A rule `{qual}` has to follow.",
    "internal_dependency": "What `{qual}` can reuse from the repository.",
    "external_dependency": "Libraries `{qual}` needs.",
}
RECAP = "About your last answer on `{qual}`: can you sum up what you proposed, in a few lines?"


def param_names(params: list[str]) -> list[str]:
    return [re.split(r"[:=]", p)[0].strip(" *") for p in params]


def described(info: Analysis, core: str | None = None) -> tuple[list[str], list[str]]:
    """(what the function does, its rules): plain sentences a developer would say. What
    it does: one or two sentences of the docstring's prose (or the LLM's ``core``), and
    its first whole doctest when the prose gives one; rules: later sentences that state
    one (at most ``MAX_CONSTRAINTS``)."""
    if core:
        said, examples = split_sentences(" ".join(core.split())), []
    else:
        said, examples = doc_sentences(info.raw_doc or info.doc, set(param_names(info.params)))
    said = [s for s in said if not REVISION_WORDS.search(re.sub(r"`[^`]*`", "", s))]
    if not said:  # a sentence that reads like a revision is not said, true or stale
        return examples[:1], []
    rules = [s for s in said[1:] if CONSTRAINT.search(s)][:MAX_CONSTRAINTS]
    what = cut([s for s in said if s not in rules], MAX_CORE)[:2]
    if len(what) == 1 and examples:
        what.append(examples[0])
    return what, rules


def true_units(target: Target, info: Analysis, core: str | None = None) -> list[Unit]:
    """The true items of a sample, one unit each, in canonical order (prerequisites of a
    unit always come earlier in this list)."""
    qual, loc = target.qualname, target.location
    shown = ", ".join(info.params) or "no parameters"
    units = [Unit("location", "function_location", f"`{qual}` belongs in `{target.path}`.",
                  [loc], target.path),
             Unit("params", "parameter_list", f"`{qual}` takes ({shown}).", [loc], shown)]
    said, rules = described(info, core)
    if said:
        what = " ".join(said)
        units.append(Unit("core", "core_functionality", f"`{qual}` should: {what}", [], what))
        units += [Unit(f"constraint:{i}", "logical_constraint", f"For `{qual}`: {s}", [], s)
                  for i, s in enumerate(rules)]
    units += [Unit(f"internal:{name}", "internal_dependency",
                   f"`{qual}` should reuse `{name}` from `{path}`.", [f"{path}::{name}"],
                   name, path) for name, path in info.internal[:MAX_INTERNAL]]
    units += [Unit(f"external:{name}", "external_dependency",
                   f"`{qual}` needs `{name}` from the `{module}` module.", [], name, module)
              for name, module in info.external[:MAX_EXTERNAL]]
    return units


def add_prereqs(units: list[Unit], rng: random.Random) -> None:
    """Location first; parameters and core functionality after it; constraints and
    dependencies after the core functionality; now and then one more edge to an earlier
    unit. Edges only point to earlier units of the canonical list: a DAG."""
    keys = [u.key for u in units]
    for n, unit in enumerate(units):
        if n == 0:
            unit.prereqs = []
            continue
        base = "core" if unit.type in ("logical_constraint", *REAL_TYPES[1:]) \
            and "core" in keys else "location"
        unit.prereqs = [base]
        earlier = [k for k in keys[:n] if k != base]
        if earlier and rng.random() < 0.3:
            unit.prereqs.append(rng.choice(earlier))


def topological(units: list[Unit], rng: random.Random) -> list[Unit]:
    """A random topological order of the units (Kahn, a random ready unit each step)."""
    done: set[str] = set()
    left = list(units)
    order = []
    while left:
        ready = [u for u in left if set(u.prereqs) <= done]
        if not ready:
            raise BuildError("prerequisite cycle among units " + ", ".join(u.key for u in left))
        unit = rng.choice(ready)
        order.append(unit)
        done.add(unit.key)
        left.remove(unit)
    return order


def _distractors(unit: Unit, target: Target, info: Analysis, facts: RepoFacts, n: int,
                 rng: random.Random, rewrites: list[str], exclude: set[str],
                 own: list[str]) -> list[Any]:
    if unit.type in REAL_TYPES:
        used = {name for name, _ in info.internal} | {name for name, _ in info.external}
        real = real_candidates(unit, target.path, facts, used | {target.qualname}, exclude)
        return pick(real or real_fallbacks(unit, target.qualname), n, rng)
    texts = template_candidates(unit, target.qualname, info.params, facts, own,
                                exclude | {target.location})
    if rewrites:
        return [(t, []) for t in [*rewrites, *texts][:n]]
    return [(t, []) for t in pick(texts, n, rng)]


def sample_items(target: Target, info: Analysis, facts: RepoFacts, rng: random.Random, sid: str,
                 core: str | None = None, rewrites: dict[str, list[str]] | None = None,
                 exclude: set[str] | None = None) -> list[dict[str, Any]]:
    """The items of one sample in asking order: units in a random topological order, the
    distractors of a mutated unit before its true item."""
    units = true_units(target, info, core)
    # everything the docstring says: a requirement borrowed from another function that is
    # this close to one of them may be true of the target too
    own = [*doc_sentences(info.raw_doc or info.doc)[0],
           *(sentence for group in described(info, core) for sentence in group)]
    add_prereqs(units, rng)
    mutated = set(rng.sample([u.key for u in units], len(units) // 2))
    items: list[dict[str, Any]] = []

    def add(unit: Unit, text: str, locations: list[str], truth: bool) -> None:
        items.append({"id": f"{sid}-{len(items)}", "type": unit.type, "text": text,
                      "locations": locations, "truth": truth, "unit": f"{sid}:{unit.key}",
                      "prereqs": [f"{sid}:{p}" for p in unit.prereqs]})

    for unit in topological(units, rng):
        if unit.key in mutated:
            for text, locations in _distractors(unit, target, info, facts, rng.randint(1, 3),
                                                rng, (rewrites or {}).get(unit.key, []),
                                                exclude or set(), own):
                add(unit, text, locations, False)
        add(unit, unit.text, unit.locations, True)
    return items


def _groups(items: list[dict[str, Any]], size: int, rng: random.Random) -> list[list[dict]]:
    """Items scheduled into queries of at most ``size`` items. Units start in their (random
    topological) order; the versions of a unit go to strictly later queries, now and then
    with a query in between (dispersion), so a query never holds two items of one unit."""
    units: list[list[dict]] = []
    for item in items:
        if units and units[-1][0]["unit"] == item["unit"]:
            units[-1].append(item)
        else:
            units.append([item])
    queries: list[list[dict]] = []
    start = 0
    for n, versions in enumerate(units):
        start += int(n > 0 and rng.random() < 1 / size)
        at = start
        for version in versions:
            while len(queries) <= at or len(queries[at]) >= size:
                if len(queries) <= at:
                    queries.append([])
                else:
                    at += 1
            queries[at].append(version)
            at += 1 + int(rng.random() < 0.3)
    return [q for q in queries if q]


def _task_topics(sample: dict[str, Any], qual: str, hops: int, size: int,
                 rng: random.Random, recaps: int = 2) -> list[dict[str, Any]]:
    sid = sample["id"]
    groups = _groups(sample["items"], size, rng)
    while hops > 1 and len(groups) < hops:  # a multi-hop sample needs a query per topic
        longest = max(range(len(groups)), key=lambda i: len(groups[i]))
        if len(groups[longest]) < 2:
            break
        groups[longest:longest + 1] = [groups[longest][:1], groups[longest][1:]]
    queries = []
    for n, group in enumerate(groups):
        keys = list(dict.fromkeys(loc for it in group for loc in it["locations"]))[:3]
        queries.append({"id": f"{sid}-q{n}", "type": group[0]["type"],
                        "contains": [it["id"] for it in group],
                        "keys": [{"type": "location", "key": k} for k in keys],
                        "summary": SUMMARIES[group[0]["type"]].format(qual=qual),
                        "recap": False})
    hops = max(1, min(hops, len(queries)))
    cuts = sorted(rng.sample(range(1, len(queries)), hops - 1)) if hops > 1 else []
    bounds = [0, *cuts, len(queries)]
    topics = [{"id": f"{sid}-t{i}", "kind": "task", "sample": sid,
               "queries": queries[a:b]} for i, (a, b) in enumerate(pairwise(bounds))]
    for r in range(rng.randint(1, recaps)):  # recaps: about the previous answer, never first
        topic = rng.choice(topics)
        topic["queries"].insert(rng.randint(1, len(topic["queries"])),
                                {"id": f"{sid}-r{r}", "type": "recap", "contains": [],
                                 "keys": [], "summary": RECAP.format(qual=qual),
                                 "recap": True})
    return topics


def _merge(per_sample: list[list[dict]], rng: random.Random) -> tuple[list[dict], list[int]]:
    """Topics of all samples, each sample's in order, merged at random avoiding two
    topics of one sample in a row; and the gaps where that could not be avoided."""
    heads = [list(t) for t in per_sample]
    merged: list[dict] = []
    last = -1
    while any(heads):
        ready = [i for i, h in enumerate(heads) if h and i != last] or \
            [i for i, h in enumerate(heads) if h]
        last = rng.choice(ready)
        merged.append(heads[last].pop(0))
    gaps = [j for j in range(1, len(merged))
            if merged[j]["sample"] == merged[j - 1]["sample"]]
    return merged, gaps


def _sizes(total: int, topics: int, rng: random.Random) -> list[int]:
    sizes = [1] * topics
    for _ in range(total - topics):
        sizes[rng.choice([i for i, s in enumerate(sizes) if s < MAX_NOISE_TOPIC])] += 1
    return sizes


def build_outline(repo: Path, targets: list[Target], oid: str, seed: int, *,
                  facts: RepoFacts | None = None, subset: str = "single-hop",
                  length: int | None = None, cores: dict[str, str] | None = None,
                  rewrites: dict[str, dict[str, list[str]]] | None = None,
                  repo_ref: str | None = None) -> dict[str, Any]:
    """One outline over ``targets`` (k = len(targets) samples) of ``length`` queries."""
    if subset not in SUBSETS:
        raise BuildError(f"subset must be one of {SUBSETS}, not {subset!r}")
    rng = random.Random(f"{seed}:{oid}")
    facts = facts if facts is not None else repo_facts(repo)
    length = length if length is not None else rng.randrange(MIN_QUERIES, MAX_QUERIES)
    infos = [analyse(repo, target, facts) for target in targets]
    # distractors never point at a removed target nor at a true dependency of the outline
    exclude = {t.location for t in targets} | {f"{path}::{name}" for info in infos
                                               for name, path in info.internal}
    samples = []
    for n, (target, info) in enumerate(zip(targets, infos, strict=True)):
        sid = f"s{n + 1}"
        items = sample_items(target, info, facts, rng, sid, (cores or {}).get(target.namespace),
                             (rewrites or {}).get(target.namespace), exclude)
        samples.append({"id": sid, "namespace": target.namespace, "path": target.path,
                        "signature": info.signature, "tests": list(target.tests),
                        "items": items})
    for size in (*range(2, 9), 9):  # as many items to a query as the length needs
        per_sample = [_task_topics(s, t.qualname, 1 if subset == "single-hop"
                                   else rng.choice((2, 3)), size, rng, 2 if size < 9 else 1)
                      for s, t in zip(samples, targets, strict=True)]
        merged, gaps = _merge(per_sample, rng)
        tasks = sum(len(t["queries"]) for t in merged)
        if tasks + max(1, len(gaps)) <= length:
            break
    else:
        raise BuildError(f"{oid}: {len(targets)} samples do not fit in {length} queries")
    noise_n = length - tasks
    low = max(1, len(gaps), math.ceil(noise_n / MAX_NOISE_TOPIC))
    removed = {t.location for t in targets}
    available = len(subjects(facts, removed))
    count = rng.randint(low, max(low, min(noise_n // 3, available)))
    noise = noise_topics(facts, removed, _sizes(noise_n, count, rng), rng)
    slots: dict[int, list[dict]] = {}
    for j, topic in enumerate(noise):  # separators first, then anywhere
        gap = gaps[j] if j < len(gaps) else rng.randrange(len(merged) + 1)
        slots.setdefault(gap, []).append(topic)
    ordered = [t for j in range(len(merged) + 1)
               for t in [*slots.get(j, []), *merged[j:j + 1]]]
    for topic in ordered:  # noise descriptions go to the task list, not into the topic
        topic.pop("about", None)
    names = {s["id"]: t.qualname for s, t in zip(samples, targets, strict=True)}
    return {
        "id": oid, "repo": repo_ref or str(repo), "subset": subset,
        "samples": samples, "topics": ordered,
        "tasks": {
            "topics": [f"implementing `{names[s['id']]}`" for s in samples]
            + [t.pop("description") for t in ordered if t["kind"] == "noise"],
            "extract": {s["id"]: f"List everything we settled about `{names[s['id']]}`, one "
                                 "fact per line." for s in samples},
            "generate": {s["id"]: f"Write the complete function `{names[s['id']]}` for "
                                  f"`{s['path']}` now, following everything we settled. Reply "
                                  f"with one Python code block defining "
                                  f"`{names[s['id']].split('.')[-1]}`." for s in samples},
        },
        "build": {"seed": seed, "length": length, "k": len(samples)},
    }


def grid_plan(count: int = 16) -> list[tuple[tuple[int, int], int, str]]:
    """The paper's even grid: (l interval, k, subset) for 4 intervals x 4 values of k,
    each k with both subsets twice and each interval with both subsets twice; cycled
    when ``count`` > 16."""
    cells = [(bin_, k, SUBSETS[(b + k) % 2]) for b, bin_ in enumerate(L_BINS)
             for k in K_VALUES]
    return [cells[n % len(cells)] for n in range(count)]


def build_outlines(repo: Path, targets: list[Target], count: int, seed: int, *,
                   grid: bool = False, facts: RepoFacts | None = None,
                   cores: dict[str, str] | None = None,
                   rewrites: dict[str, dict[str, list[str]]] | None = None,
                   repo_ref: str | None = None) -> list[dict[str, Any]]:
    """``count`` outlines: on the grid, else k = 1..4 in turn with l and the subset drawn."""
    rng = random.Random(seed)
    facts = facts if facts is not None else repo_facts(repo)
    outlines = []
    for n in range(count):
        if grid:
            (low, high), k, subset = grid_plan(count)[n]
        else:
            (low, high), k = (MIN_QUERIES, MAX_QUERIES), K_VALUES[n % len(K_VALUES)]
            subset = rng.choice(SUBSETS)
        if k > len(targets):
            raise BuildError(f"k = {k} needs {k} targets, only {len(targets)} kept")
        chosen = rng.sample(targets, k)
        tag = "sh" if subset == "single-hop" else "mh"
        outlines.append(build_outline(repo, chosen, f"{repo.resolve().name}-{n + 1:02d}-k{k}-{tag}",
                                      seed, facts=facts, subset=subset,
                                      length=rng.randrange(low, high), cores=cores,
                                      rewrites=rewrites, repo_ref=repo_ref))
    return outlines
