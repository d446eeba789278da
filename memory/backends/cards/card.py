"""A memory card: what a selected unit becomes in the context, and its audit.

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
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.backends.cards.graph import Node, subject_key
from memory.backends.cards.rules import (
    ACTION_VERB,
    PLACEHOLDER_START,
    PLACEHOLDERS,
)
from memory.backends.cards.score import Judgment
from memory.backends.cards.text import HEAD, LABELS
from memory.fences import fenced

LEVELS = ("full", "short", "minimal")
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
    members: tuple[str, ...] = ()  # the units a per-subject card holds (``group``)
    alarm: str = ""  # code written since breaks it (``alarm``)

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
        elif text.lower().strip(" .:-") in PLACEHOLDERS or PLACEHOLDER_START.match(text):
            problems.append(f"{name} is a placeholder")
    hint = card.action_hint.lower()
    if not ACTION_VERB.search(hint):
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
    if where and where.lower() in PLACEHOLDERS:  # a function named `none` is no placeholder
        where = f"`{where}`"
    scope = ", ".join(dict.fromkeys([*node.locations, *([where] if where else [])])) \
        or "the whole session"
    hint = judgment.with_context_action.strip()
    if not ACTION_VERB.search(hint.lower()):
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
        evidence = f"latest version from {node.source}:\n{fenced(shown, 'python')}"
        brief = f"{lines[0].strip() if lines else where} (latest version, {node.source})"
        failure = "the answer starts over and loses the changes already agreed." + revision
    elif node.type == "failure":
        trigger = f"when you change or run {where or 'the failing code'} again"
        evidence = f"{quote(node.content, 40)} ({node.source})"
        failure = "the same failure comes back."
    elif node.type == "tests":
        trigger = "when you change the code these tests cover, or run them again"
        evidence = f"{quote(node.content, 80)} ({node.source})"
        failure = "the answer relies on an outdated test result." + (
            " It is the latest run: earlier results it revised no longer hold."
            if revised else "")
    elif node.type == "summary":
        trigger = "when the request touches work done in an earlier session"
        evidence = quote(node.content, 120)
        failure = "earlier decisions are contradicted or redone."
    else:  # symbol, file
        lines = node.content.splitlines()
        shown = "\n".join(lines[:EVIDENCE_LINES]) + ("\n# ..." if len(lines) > EVIDENCE_LINES
                                                     else "")
        trigger = f"when the request needs {where}"
        evidence = fenced(shown, "python")
        brief = lines[0].strip() if lines else where
        origin = max(origin, node.tokens)
        failure = "the answer guesses the signature or behaviour of existing code."
    return Card(node.id, node.type, trigger, evidence, hint, failure, scope,
                round(utility, 4), origin, brief, stale=node.stale, alarm=node.alarm,
                revises="revises turn " + ", ".join(dict.fromkeys(str(r.turn) for r in revised))
                if revised else "")


@dataclass
class Unit:
    """A scored unit up for assembly."""

    node: Node
    judgment: Judgment
    utility: float
    card: Card


def card_key(node: Node) -> str:
    """The card a unit goes into: one per subject for facts, else its own."""
    key = subject_key(node.subject) if node.type == "fact" else ""
    return f"facts:{key}" if key else node.id
