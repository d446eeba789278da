"""Budget-aware assembly of memory cards (``card``), the two modes CICL separates:
- ``post`` (post-selection compression): select the raw units by utility under the
  budget, then compile the selected into cards (degrading, then dropping the least
  useful, until the cards fit);
- ``pre`` (pre-budget compression): compile every candidate into its card first, then
  select cards by utility under the budget.
Both follow CICL's budget policy: at most ``max_units`` cards, a utility floor (0.02 for
the first unit, 0.06 after), 0.12 more for a stale unit, near-duplicates skipped. Facts
about one subject share a card (``group``). Repository code the next decision hardly
needs (necessity below ``BRIEF_NECESSITY``: the query does not name it and no current
fact about what it names points at it) is shown by its brief evidence (a signature)
and its location, not its body: with ``post`` packing it was most of a card's tokens
and rarely what the answer used. A card of the developer's statements shows them
whole at its ``short`` level: its trigger and failure-if-ignored are the same words on
every such card (about 30 % of the statement cards' tokens on webcolors).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory.backends.cards.card import LEVELS, Audit, Card, Unit, audit, card_key
from memory.backends.cards.graph import Node, slot
from memory.backends.cards.group import group_facts
from memory.backends.cards.rules import (
    BRIEF_NECESSITY,
    MIN_AFTER,
    MIN_FIRST,
    REDUNDANT,
    STALE_FLOOR,
    WORD_CHARS,
)

REPO_KINDS = ("symbol", "file")
PACKINGS = ("post", "pre")


@dataclass
class Packed:
    mode: str
    cards: list[Card] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (node id, why)
    audits: dict[str, Audit] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.cards)


def _words(text: str) -> set[str]:
    return set(WORD_CHARS.findall(text.lower()))


def _redundant(node: Node, kept: list[Node]) -> bool:
    """A near-duplicate of a kept unit (two statements setting different slots, such as
    two dependencies, are not duplicates however many words they share)."""
    mine = _words(node.content)
    for other in kept:
        if node.type == other.type == "fact" and slot(node.content) != slot(other.content):
            continue
        theirs = _words(other.content)
        if mine and theirs and len(mine & theirs) / len(mine | theirs) >= REDUNDANT:
            return True
    return False


def _floor(unit: Unit, selected: int) -> float:
    return (MIN_FIRST if not selected else MIN_AFTER) + (STALE_FLOOR if unit.node.stale else 0.0)


def _size(card: Card, level: str, count: Callable[[str], int]) -> int:
    return count(card.render(level))


def pack(units: list[Unit], budget: int, count: Callable[[str], int], *, mode: str = "post",
         max_units: int = 12) -> Packed:
    """Cards for ``units`` (any order) within ``budget`` tokens: chosen most useful
    first, shown in the order things were said (``_told``)."""
    if mode not in PACKINGS:
        raise ValueError(f"unknown packing {mode!r}; one of {', '.join(PACKINGS)}")
    ranked = sorted(units, key=lambda u: (-u.utility, u.node.id))
    packed = Packed(mode)
    for unit in ranked:
        packed.audits[unit.node.id] = audit_at(unit.card, "full", count)
    ranked = [u for u in ranked if _shown(u, packed)]
    if mode == "post":
        chosen = _select(ranked, budget, lambda u: u.node.tokens, max_units, packed)
        groups = group_facts(chosen)
        for card, members in groups:
            level = "minimal" if _background(members) else "short" if _said(members) \
                else "full"
            card.level, card.tokens = level, _size(card, level, count)
        _shrink(groups, budget, count, packed)
    else:
        for unit in ranked:
            _precompress(unit.card, count)
        chosen = _select(ranked, budget, lambda u: u.card.tokens, max_units, packed)
        groups = group_facts(chosen)
        for card, members in groups:
            if len(members) > 1:  # as compressed as its most compressed member
                level = max((u.card.level for u in members), key=LEVELS.index)
                card.level, card.tokens = level, _size(card, level, count)
    packed.cards = [card for card, _ in sorted(groups, key=_told)]
    for card in packed.cards:
        packed.audits[card.node_id] = audit(card)
    return packed


def _told(group: tuple[Card, list[Unit]]) -> tuple[int, int, int, str]:
    """Presentation order: a card whose decision the latest code breaks first, then the
    repository's code, then the conversation's cards in the order they were said (a
    card at its latest statement), so the latest statement about a subject comes last."""
    card, members = group
    turn = max(u.node.turn for u in members)
    return (0 if card.alarm else 1, 0 if turn < 0 else 1, turn, card.node_id)


def _background(members: list[Unit]) -> bool:
    """Repository code that the next decision hardly needs (``BRIEF_NECESSITY``)."""
    return all(u.node.type in REPO_KINDS and u.judgment.necessity < BRIEF_NECESSITY
               for u in members)


def _said(members: list[Unit]) -> bool:
    """The developer's statements: their card's trigger and failure-if-ignored are the
    same words on every such card (its scope names the function, its head the turns it
    revises), so it shows its evidence, action hint and scope (``short``)."""
    return all(u.node.type == "fact" for u in members)


def audit_at(card: Card, level: str, count: Callable[[str], int]) -> Audit:
    card.level, card.tokens = level, count(card.render(level))
    return audit(card)


def _shown(unit: Unit, packed: Packed) -> bool:
    result = packed.audits[unit.node.id]
    if result.ok and unit.node.current:
        return True
    why = "superseded" if not unit.node.current else "; ".join(result.problems)
    packed.dropped.append((unit.node.id, f"not shown: {why}"))
    return False


def _select(ranked: list[Unit], budget: int, cost: Callable[[Unit], int], max_units: int,
            packed: Packed) -> list[Unit]:
    chosen: list[Unit] = []
    cards: set[str] = set()  # facts about one subject make one card (``group``)
    used = 0
    for unit in ranked:
        card = card_key(unit.node)
        if card not in cards and len(cards) >= max_units:
            packed.dropped.append((unit.node.id, "over the card limit"))
            continue
        if unit.utility < _floor(unit, len(chosen)):
            packed.dropped.append((unit.node.id, f"utility {unit.utility:.3f} below the floor"))
            continue
        if _redundant(unit.node, [u.node for u in chosen]):
            packed.dropped.append((unit.node.id, "repeats a selected unit"))
            continue
        if used + cost(unit) > budget:
            packed.dropped.append((unit.node.id, "over the budget"))
            continue
        chosen.append(unit)
        cards.add(card)
        used += cost(unit)
    return chosen


def _precompress(card: Card, count: Callable[[str], int]) -> None:
    """CICL's compressor: the full card, else shorter levels while it is not shorter
    than its source."""
    for level in LEVELS:
        card.level, card.tokens = level, _size(card, level, count)
        if card.tokens < card.original_tokens:
            return


def _shrink(groups: list[tuple[Card, list[Unit]]], budget: int, count: Callable[[str], int],
            packed: Packed) -> None:
    """Degrade the least useful cards, then drop them, until the cards fit."""
    def used() -> int:
        return sum(card.tokens for card, _ in groups)

    for level in LEVELS[1:]:
        for card, _ in reversed(groups):
            if used() <= budget:
                return
            if LEVELS.index(card.level) < LEVELS.index(level):  # never a longer level
                card.level, card.tokens = level, _size(card, level, count)
    while groups and used() > budget:
        _, members = groups.pop()
        packed.dropped.extend((u.node.id, "card over the budget") for u in members)
