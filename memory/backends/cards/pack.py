"""Memory cards: compiling selected units, the structural audit, budget-aware assembly.

A card carries CICL's five mandatory fields (trigger, evidence, action hint,
failure-if-ignored, scope) and the unit's utility. It renders at three levels, as
CICL's compressor degrades a card that is not shorter than its source: ``full`` (all
fields), ``short`` (brief evidence, action hint, scope), ``minimal`` (brief evidence,
action hint). Unlike CICL's minimal card (action hint and scope), ours never drops
the evidence: in a coding conversation the evidence is the decision itself (the
developer's sentence, a signature), and a card without it says only where to look.

The audit (CICL's card-quality checks) runs on every card: the five fields present,
an action verb in the hint, no placeholder text, and the compression ratio (card
tokens / tokens of what it was taken from). A card that fails the first three is
never shown.

Assembly, the two modes CICL separates:
- ``post`` (post-selection compression): select the raw units by utility under the
  budget, then compile the selected into cards (degrading, then dropping the least
  useful, until the cards fit);
- ``pre`` (pre-budget compression): compile every candidate into its card first, then
  select cards by utility under the budget.
Both follow CICL's budget policy: at most ``max_units`` cards, a utility floor (0.02 for
the first unit, 0.06 after), 0.12 more for a stale unit, near-duplicates skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memory.backends._cards_graph import Node, slot, subject_key
from memory.backends._cards_score import Judgment
from memory.backends._cards_text import HEAD, LABELS

LEVELS = ("full", "short", "minimal")
ACTION_VERBS = ("inspect", "read", "open", "search", "check", "update", "fix", "call", "run",
                "use", "compare", "look")
PLACEHOLDERS = frozenset({"todo", "tbd", "unknown", "not available", "n/a", "none", ""})
_PLACEHOLDER_START = re.compile(r"^(todo|tbd|unknown|not available|n/a|none)\b", re.I)
MIN_FIRST, MIN_AFTER, STALE_FLOOR = 0.02, 0.06, 0.12  # CICL's BudgetPolicy
REDUNDANT = 0.82  # word-set Jaccard from which a unit repeats a selected one
PACKINGS = ("post", "pre")
EVIDENCE_LINES = 40  # of code shown in a full card


@dataclass
class Card:
    node_id: str
    kind: str  # the unit's type
    trigger: str
    evidence: str
    action_hint: str
    failure_if_ignored: str
    scope: str
    utility: float
    original_tokens: int
    brief_evidence: str = ""  # the evidence of a short card (a signature for code)
    level: str = "full"
    tokens: int = 0
    stale: str = ""
    revises: str = ""  # "revises turn 3": the card is the current version of a revision
    members: tuple[str, ...] = ()  # the units a per-subject card holds (``_cards_group``)
    alarm: str = ""  # code written since breaks it (``_cards_alarm``)

    def fields(self) -> dict[str, str]:
        return {"trigger": self.trigger, "evidence": self.evidence,
                "action_hint": self.action_hint, "failure_if_ignored": self.failure_if_ignored,
                "scope": self.scope}

    def render(self, level: str | None = None) -> str:
        level = level or self.level
        head = f"{HEAD}{self.node_id} · utility {self.utility:.2f}" + (
            f" · {self.revises}" if self.revises else "") + (
            f" · STALE: {self.stale}" if self.stale else "") + (
            f" · ALARM: {self.alarm}; follow this" if self.alarm else "") + "]"
        evidence = self.evidence if level == "full" else (self.brief_evidence or self.evidence)
        lines = [head]
        if level == "full":
            lines.append(f"{LABELS['trigger']}: {self.trigger}")
        lines.append(f"{LABELS['evidence']}: {evidence}")
        lines.append(f"{LABELS['action_hint']}: {self.action_hint}")
        if level == "full":
            lines.append(f"{LABELS['failure_if_ignored']}: {self.failure_if_ignored}")
        if level != "minimal":
            lines.append(f"{LABELS['scope']}: {self.scope}")
        return "\n".join(lines)

    @property
    def ratio(self) -> float:
        """Card tokens / tokens of its source (lower is shorter)."""
        return self.tokens / max(1, self.original_tokens)


@dataclass(frozen=True)
class Audit:
    problems: tuple[str, ...]
    ratio: float
    compressed: bool

    @property
    def ok(self) -> bool:
        return not self.problems


def audit(card: Card) -> Audit:
    problems: list[str] = []
    for name, value in card.fields().items():
        text = value.strip()
        if not text:
            problems.append(f"{name} missing")
        elif text.lower().strip(" .:-") in PLACEHOLDERS or _PLACEHOLDER_START.match(text):
            problems.append(f"{name} is a placeholder")
    hint = card.action_hint.lower()
    if not any(re.search(rf"\b{verb}\b", hint) for verb in ACTION_VERBS):
        problems.append("action hint has no action verb")
    return Audit(tuple(problems), round(card.ratio, 4),
                 0 < card.tokens < card.original_tokens)


def quote(text: str, words: int = 60) -> str:
    parts = " ".join(text.split()).split(" ")
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def compile_card(node: Node, judgment: Judgment, utility: float,
                 revised: list[Node]) -> Card:
    """The card of one unit. ``revised``: the earlier units it superseded (only their
    turns are named; their content never reaches a card)."""
    where = node.subject or (node.locations[0] if node.locations else "")
    scope = ", ".join(dict.fromkeys([*node.locations, *([where] if where else [])])) \
        or "the whole session"
    hint = judgment.with_context_action.strip()
    if not any(re.search(rf"\b{v}\b", hint.lower()) for v in ACTION_VERBS):
        hint = f"use this when you act: {hint}" if hint else f"use this {node.type}"
    origin = node.origin_tokens or node.tokens
    revision = (f" It revises what was said at turn(s) "
                f"{', '.join(str(r.turn) for r in revised)}; follow this version."
                if revised else "")
    brief = ""
    if node.type == "fact":
        trigger = f"when you write, change or explain {where or 'the code this concerns'}"
        evidence = f"\"{quote(node.content)}\" (the developer, {node.source})"
        failure = "the answer breaks what the developer stated." + revision
    elif node.type == "code":
        lines = node.content.splitlines()
        shown = "\n".join(lines[:EVIDENCE_LINES]) + ("\n# ..." if len(lines) > EVIDENCE_LINES
                                                     else "")
        trigger = f"when you continue the work on {where or 'this code'}"
        evidence = f"latest version from {node.source}:\n```python\n{shown}\n```"
        brief = f"{lines[0].strip() if lines else where} (latest version, {node.source})"
        failure = "the answer starts over and loses the changes already agreed." + revision
    elif node.type == "failure":
        trigger = f"when you change or run {where or 'the failing code'} again"
        evidence = f"{quote(node.content, 40)} ({node.source})"
        failure = "the same failure comes back."
    elif node.type == "summary":
        trigger = "when the request touches work done in an earlier session"
        evidence = quote(node.content, 120)
        failure = "earlier decisions are contradicted or redone."
    else:  # symbol, file
        lines = node.content.splitlines()
        shown = "\n".join(lines[:EVIDENCE_LINES]) + ("\n# ..." if len(lines) > EVIDENCE_LINES
                                                     else "")
        trigger = f"when the request needs {where}"
        evidence = f"```python\n{shown}\n```"
        brief = lines[0].strip() if lines else where
        origin = max(origin, node.tokens)
        failure = "the answer guesses the signature or behaviour of existing code."
    return Card(node.id, node.type, trigger, evidence, hint, failure, scope,
                round(utility, 4), origin, brief, stale=node.stale, alarm=node.alarm,
                revises=f"revises turn {', '.join(str(r.turn) for r in revised)}"
                if revised else "")


@dataclass
class Unit:
    """A scored unit up for assembly."""

    node: Node
    judgment: Judgment
    utility: float
    card: Card


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
    return set(re.findall(r"\w+", text.lower()))


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
    from memory.backends._cards_group import group_facts

    if mode == "post":
        chosen = _select(ranked, budget, lambda u: u.node.tokens, max_units, packed)
        groups = group_facts(chosen)
        for card, _ in groups:
            card.level, card.tokens = "full", _size(card, "full", count)
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


def card_key(node: Node) -> str:
    """The card a unit goes into: one per subject for facts, else its own."""
    key = subject_key(node.subject) if node.type == "fact" else ""
    return f"facts:{key}" if key else node.id


def _told(group: tuple[Card, list[Unit]]) -> tuple[int, int, int, str]:
    """Presentation order: a card whose decision the latest code breaks first, then the
    repository's code, then the conversation's cards in the order they were said (a
    card at its latest statement), so the latest statement about a subject comes last."""
    card, members = group
    turn = max(u.node.turn for u in members)
    return (0 if card.alarm else 1, 0 if turn < 0 else 1, turn, card.node_id)


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
    cards: set[str] = set()  # facts about one subject make one card (``_cards_group``)
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
            card.level, card.tokens = level, _size(card, level, count)
    while groups and used() > budget:
        _, members = groups.pop()
        packed.dropped.extend((u.node.id, "card over the budget") for u in members)
