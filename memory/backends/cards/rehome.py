"""The dependency rules again, when the place said for a function changes.

A dependency the function's module does not know gives way to the next one of its frame
that the module knows, and a close name replaces an earlier one unless the module knows
both and it is no alternative (``revise.Reviser.revisions``). The module is the file said
last as the function's place (``ground.home``), and in a long conversation an earlier
place may be a stale one: under it, true dependencies looked foreign and gave way, or
two the true module has at hand looked like one replacing the other (isodate: under a
stale `isotzinfo.py`, `parse_tzinfo` replaced the true `parse_date`). So when the place
changes, these decisions are taken again under the new place: a decision no longer made
is taken back, unless a statement said since revises the dependency by another rule (a
retraction, a close name); a foreign-rule decision it now makes is applied. Revisions
made by other rules are left as they are, and so is a close name that did not replace
under the old place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.backends.cards.graph import ContextGraph, Node, frame, subject_key
from memory.backends.cards.judge import RevisionJudge
from memory.backends.cards.revise import Reviser
from memory.backends.cards.rules import ADDITIVE
from memory.backends.cards.uses import contradicts_use, negates_use, same_dependency
from memory.index.embed import cosine


@dataclass
class Rehoming:
    restored: list[Node] = field(default_factory=list)
    superseded: list[tuple[Node, Node, float]] = field(default_factory=list)  # new, old, sim


def _facts(graph: ContextGraph, subject: str) -> list[Node]:
    """Every fact about ``subject``, current or not, in the order said (the graph keeps
    nodes in the order they were added)."""
    key = subject_key(subject)
    return sorted((n for n in graph.of_type("fact") if key and subject_key(n.subject) == key),
                  key=lambda n: n.turn)


def _dependency(node: Node) -> bool:
    return bool(ADDITIVE.search(frame(node.statement)))


def _candidates(reviser: Reviser, facts: list[Node], old: Node,
                names: frozenset[str] | None) -> list[Node]:
    """The later dependencies ``old`` gives way to under a module knowing ``names``, in
    the order said: none unless it is foreign there; those of its frame the module knows,
    naming another name."""
    if names is None or negates_use(old.statement) or not reviser.foreign(old.statement, names):
        return []
    later = facts[facts.index(old) + 1:]
    return [new for new in later if _dependency(new) and not negates_use(new.statement)
            and frame(new.statement) == frame(old.statement)
            and not reviser.foreign(new.statement, names)
            and not same_dependency(new.statement, old.statement)]


def _revised_since(reviser: Reviser, graph: ContextGraph, facts: list[Node], old: Node,
                   names: frozenset[str] | None) -> tuple[Node, float] | None:
    """The first statement said after ``old`` that revises it by another rule, now it is
    current again: the graph's (a retraction, the same slot) or a close name."""
    for new in facts[facts.index(old) + 1:]:
        if contradicts_use(new.statement, old.statement, new.subject):
            return new, _similarity(graph, new, old)  # said since not to be used
        if new.id not in graph.vectors:
            continue
        for other, sim in graph.revisions(new, graph.vectors[new.id], graph.claims.get(new.id),
                                          graph.bodies.get(new.id)):
            if other is old:
                return new, sim
        if _dependency(new) and frame(new.statement) == frame(old.statement):
            close = reviser.replaces_under(new.statement, old.statement, names)
            if close:
                return new, close
    return None


def _similarity(graph: ContextGraph, a: Node, b: Node) -> float:
    if a.id not in graph.vectors or b.id not in graph.vectors:
        return 0.0
    return float(cosine(graph.vectors[a.id], graph.vectors[b.id][None, :])[0])


def _still_close(reviser: Reviser, graph: ContextGraph, old: Node,
                 names: frozenset[str] | None) -> bool:
    """Whether what replaced ``old`` as a close name still does under the current place."""
    new = graph.nodes.get(old.superseded_by or "")
    return new is None or bool(reviser.replaces_under(new.statement, old.statement, names))


def _take_back(reviser: Reviser, graph: ContextGraph, facts: list[Node], old: Node,
               names: frozenset[str] | None, done: Rehoming) -> bool:
    """Make ``old`` current again, unless a statement said since revises it by another
    rule (then that one supersedes it: True)."""
    graph.restore(old)
    since = _revised_since(reviser, graph, facts, old, names)
    if since is not None:
        graph.supersede(since[0], old, since[1])
        done.superseded.append((since[0], old, since[1]))
        return True
    done.restored.append(old)
    return False


async def rehome(reviser: Reviser, graph: ContextGraph, subject: str,
                 judge: RevisionJudge | None = None) -> Rehoming:
    """Take the dependency rules again for ``subject``'s dependencies under its current
    place; ``judge``, when given, confirms a revision before it is applied."""
    names = reviser.known_in(graph, reviser.home_of(graph, subject))
    facts = _facts(graph, subject)
    done = Rehoming()
    for old in [f for f in facts if _dependency(f)]:
        if old.id in reviser.close_under and not _still_close(reviser, graph, old, names):
            reviser.close_under.discard(old.id)
            if _take_back(reviser, graph, facts, old, names, done):
                continue
        candidates = _candidates(reviser, facts, old, names)
        if old.id in reviser.foreign_under:
            if any(new.id == old.superseded_by for new in candidates):
                continue  # the same decision under the new place
            reviser.foreign_under.discard(old.id)
            if _take_back(reviser, graph, facts, old, names, done):
                continue
        if not old.current:
            continue
        for new in candidates:
            if judge is None or await judge.replaces(subject, old.content,
                                                     new.content) is not False:
                sim = _similarity(graph, new, old)
                graph.supersede(new, old, sim)
                reviser.foreign_under.add(old.id)
                done.superseded.append((new, old, sim))
                break
    return done
