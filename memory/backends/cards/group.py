"""One card per subject: the selected facts about one function or file, compiled together.

Per-unit cards repeat the same trigger, action hint, failure and scope for every
sentence the developer said about one function; in a long conversation that
boilerplate outweighs the decisions. After selection, the facts that share a subject
become one card whose evidence lists their statements in the order they were said
(with their turns), so the latest statement about the subject comes last. The card
keeps CICL's five fields, its utility is the best of its members', and it names its
members, revisions and staleness. Code, failures, symbols and summaries stay one
card per unit.
"""

from __future__ import annotations

from memory.backends.cards.card import Card, Unit, card_key, quote


def group_facts(units: list[Unit]) -> list[tuple[Card, list[Unit]]]:
    """The cards for ``units`` (selected, most useful first), facts about one subject
    merged; each with its members, in the order of the best member."""
    groups: dict[str, list[Unit]] = {}
    order: list[str] = []
    for unit in units:
        slot = card_key(unit.node)
        if slot not in groups:
            groups[slot] = []
            order.append(slot)
        groups[slot].append(unit)
    out: list[tuple[Card, list[Unit]]] = []
    for slot in order:
        members = groups[slot]
        if len(members) == 1:
            out.append((members[0].card, members))
        else:
            out.append((merged(slot, members), members))
    return out


def merged(card_id: str, members: list[Unit]) -> Card:
    """One card for several facts about one subject (``members``, most useful first)."""
    told = sorted(members, key=lambda u: (u.node.turn, u.node.id))
    best = members[0]
    lines = [f"- \"{quote(u.node.content)}\" ({u.node.source})" for u in told]
    brief = [f"- \"{quote(u.node.content)}\"" for u in told]
    scope = ", ".join(dict.fromkeys(part.strip() for u in told
                                    for part in u.card.scope.split(",") if part.strip()))
    revises = sorted({turn for u in told for turn in _turns(u.card.revises)}, key=int)
    stale = "; ".join(dict.fromkeys(u.card.stale for u in told if u.card.stale))
    alarm = "; ".join(dict.fromkeys(u.card.alarm for u in told if u.card.alarm))
    origin = sum({u.node.turn: u.card.original_tokens for u in told}.values())
    return Card(
        card_id, "fact", best.card.trigger,
        "the developer said, in this order (the latest wins):\n" + "\n".join(lines),
        best.card.action_hint,
        "the answer breaks what the developer stated." + (
            f" Some of these revise turn(s) {', '.join(revises)}; follow the later version."
            if revises else ""),
        scope, max(u.utility for u in members), origin,
        brief_evidence="in this order (the latest wins):\n" + "\n".join(brief),
        stale=stale, alarm=alarm,
        revises=f"revises turn {', '.join(revises)}" if revises else "",
        members=tuple(u.node.id for u in told))


def _turns(revises: str) -> list[str]:
    return [t.strip() for t in revises.removeprefix("revises turn").split(",") if t.strip()]
