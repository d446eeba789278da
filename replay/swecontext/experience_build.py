"""``engram replay build REPO --targets FILE --experience --out DIR``: task chains.

From the outline builder's targets and its static analysis: a target B is a related
task of target A when B calls A (the targets a related task calls are experience
tasks), or, for a target calling no other, when it shares with an experience task a
repository function that fewer than half of the targets call (a shared dependency,
not a ubiquitous helper). A task's facts are the outline builder's true items for it (location,
parameters, core functionality, constraints, dependencies); a related task needs
the parameters and the core functionality of each experience task it depends on.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from replay.locoeval._analyse import Analysis, BuildError, Target, analyse, repo_facts
from replay.locoeval.build import true_units
from replay.swecontext.experience import ExperienceSet, Task, task_json

NEEDED = ("parameter_list", "core_functionality")


def _task(target: Target, info: Analysis, tid: str) -> tuple[Task, dict[str, str]]:
    units = true_units(target, info)
    facts = {u.type: u.text for u in units if u.type in NEEDED}
    core = info.doc.split(". ")[0].rstrip(".") if info.doc else "see its tests"
    instruction = (f"Implement `{target.qualname}` in `{target.path}` ({info.signature.strip()}"
                   f"): {core}.")
    return Task(tid, target.path, target.qualname, info.signature, target.tests,
                instruction, tuple(u.text for u in units)), facts


def relations(targets: list[Target], infos: list[Analysis]) -> dict[int, list[tuple[int, str]]]:
    """For each target index B, the (A index, relation) pairs that make B a related task."""
    names = [t.qualname.split(".")[-1] for t in targets]
    uses = [{name for name, _ in info.internal} for info in infos]
    common = Counter(n for used in uses for n in used)
    out: dict[int, list[tuple[int, str]]] = {}
    for b in range(len(targets)):
        for a in range(len(targets)):
            if a == b:
                continue
            if names[a] in uses[b]:
                out.setdefault(b, []).append((a, "calls"))
                continue
            shared = sorted(n for n in uses[a] & uses[b] if common[n] * 2 < len(targets))
            if shared:
                out.setdefault(b, []).append((a, f"shares {', '.join(shared)}"))
    return out


def build_chains(repo: Path, targets: list[Target], repo_ref: str | None = None) -> ExperienceSet:
    facts = repo_facts(repo)
    infos = [analyse(repo, t, facts) for t in targets]
    every = relations(targets, infos)
    # calls first: a target that calls another is related, what it calls is experience;
    # then a target sharing a dependency with an experience task (and calling none) joins
    edges = {b: [(a, why) for a, why in pairs if why == "calls"] for b, pairs in every.items()}
    edges = {b: pairs for b, pairs in edges.items() if pairs}
    experience = {a for pairs in edges.values() for a, _ in pairs} - set(edges)
    for b, pairs in every.items():
        if b not in edges and b not in experience:
            shared = [(a, why) for a, why in pairs if a in experience]
            if shared:
                edges[b] = shared
    related_ids = set(edges)
    experience_ids = sorted(experience)
    if not experience_ids:
        raise BuildError("no target calls or shares a dependency with another: no chain")
    built = {i: _task(targets[i], infos[i], f"e{n + 1}") for n, i in enumerate(experience_ids)}
    related = []
    for n, b in enumerate(sorted(related_ids)):
        parents = [(a, why) for a, why in edges[b] if a in built]
        if not parents:
            continue
        task, _ = _task(targets[b], infos[b], f"r{n + 1}")
        needs = tuple(text for a, _ in parents for text in built[a][1].values())
        related.append(Task(task.id, task.path, task.function, task.signature, task.tests,
                            task.instruction, task.facts,
                            tuple(built[a][0].id for a, _ in parents),
                            "; ".join(f"{why} `{targets[a].qualname}`" for a, why in parents),
                            needs))
    return ExperienceSet(f"{repo.resolve().name}-chains", repo_ref or str(repo),
                         tuple(built[i][0] for i in experience_ids), tuple(related))


def as_json(chains: ExperienceSet) -> dict[str, Any]:
    return {"kind": "experience", "id": chains.id, "repo": chains.repo,
            "experience": [task_json(t) for t in chains.experience],
            "related": [task_json(t) for t in chains.related]}

