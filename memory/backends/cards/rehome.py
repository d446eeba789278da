"""The foreign-dependency rule again, when the place said for a function changes.

A dependency the function's module does not know gives way to the next one of its frame
that the module knows (``revise.Reviser.revisions``). The module is the file said last
as the function's place (``ground.home``), and in a long conversation an earlier place
may be a stale one: under it, the true dependencies looked foreign and gave way to one
another. So when the place changes, the rule's decisions are taken again under the new
place, as if it had been said from the start: a decision it no longer makes is taken
back (the dependency is current again), one it now makes is applied. Revisions made by
other rules are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.backends.cards.graph import ADDITIVE, ContextGraph, Node, frame, subject_key
from memory.backends.cards.judge import RevisionJudge
from memory.backends.cards.revise import Reviser, same_dependency
from memory.embed import cosine


@dataclass
class Rehoming:
    restored: list[Node] = field(default_factory=list)
    superseded: list[tuple[Node, Node, float]] = field(default_factory=list)  # new, old, sim


def _dependencies(graph: ContextGraph, subject: str) -> list[Node]:
    """Every dependency fact about ``subject``, current or not, in the order said."""
    key = subject_key(subject)
    return sorted((n for n in graph.of_type("fact") if key and subject_key(n.subject) == key
                   and ADDITIVE.search(frame(n.content))), key=lambda n: (n.turn, n.id))


def _wanted(reviser: Reviser, facts: list[Node], names: frozenset[str] | None,
            ) -> dict[str, Node]:
    """Old fact id -> the fact the rule makes it give way to under a module knowing
    ``names``: the first later one of its frame the module knows, naming another name."""
    out: dict[str, Node] = {}
    if names is None:
        return out
    for n, old in enumerate(facts):
        if not reviser.foreign(old.content, names):
            continue
        for new in facts[n + 1:]:
            if frame(new.content) == frame(old.content) \
                    and not reviser.foreign(new.content, names) \
                    and not same_dependency(new.content, old.content):
                out[old.id] = new
                break
    return out


async def rehome(reviser: Reviser, graph: ContextGraph, subject: str,
                 judge: RevisionJudge | None = None) -> Rehoming:
    """Apply the foreign-dependency rule to ``subject``'s dependencies under its current
    place; ``judge``, when given, confirms a revision before it is applied."""
    where = reviser.home_of(graph, subject)
    facts = _dependencies(graph, subject)
    wanted = _wanted(reviser, facts, reviser.names_in(where))
    done = Rehoming()
    for old in facts:
        by = wanted.get(old.id)
        if old.id in reviser.foreign_under:
            if by is not None and old.superseded_by == by.id:
                reviser.foreign_under[old.id] = where  # the same decision, the new place
                continue
            del reviser.foreign_under[old.id]
            graph.restore(old)
            done.restored.append(old)
        if by is None or not old.current:
            continue
        if judge is not None and await judge.replaces(subject, old.content,
                                                      by.content) is False:
            continue
        sim = 0.0
        if old.id in graph.vectors and by.id in graph.vectors:
            sim = float(cosine(graph.vectors[by.id], graph.vectors[old.id][None, :])[0])
        graph.supersede(by, old, sim)
        reviser.foreign_under[old.id] = where
        done.superseded.append((by, old, sim))
    return done
