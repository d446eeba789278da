"""The template mock user, and which mock user voices an outline.

Each query renders its information items verbatim around its summary, with its
location keys named; the wording (openers, joiners) is picked by a RNG seeded from
(seed, outline id, query id), so one seed gives byte-identical conversations.

Revision cues are a condition of their own (``revision_cues``, a rate; default 0,
LoCoEval's condition: only the order tells which version holds). At rate r, an item
that replaces an earlier version of its unit is voiced with a natural cue ("Actually,
...", "Change of plan: ...") with probability r; whether and which cue is drawn from a
RNG of its own per item, so the queries without a cued item read exactly as at rate 0.

``choose_user`` picks the mock user: the LLM one (LoCoEval's, ``replay.locoeval.llmuser``)
whenever a model other than the embedded one is in use, the template otherwise
(offline runs and CI), unless one is asked for by name. Its ``label`` is what the
results say ran, e.g. ``template (offline default)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from replay.locoeval.outline import Outline, Query

EMBEDDED = "local/"  # the embedded offline model's provider prefix (memory/llm/local.py)
KINDS = ("template", "llm")


@dataclass(frozen=True)
class UserChoice:
    """Which mock user voices the outlines, with which model, and why."""

    kind: str  # template | llm
    model: str | None  # the LLM mock user's model (None for the template)
    why: str  # "offline default", "default with a non-embedded model", "chosen"

    @property
    def label(self) -> str:
        return user_label(self.kind, self.why)


def user_label(kind: str, why: str = "") -> str:
    """``template (offline default)``; the bare kind when the reason is unknown."""
    return f"{kind} ({why})" if why else kind


def choose_user(requested: str | None, model: str, user_model: str | None = None) -> UserChoice:
    """The mock user for a run.

    Args:
        requested: ``template`` or ``llm`` when asked for by name, else ``None`` (default).
        model: the answer model.
        user_model: the LLM mock user's own model, if one was given; else the answer
            model voices the user.
    """
    if requested is not None and requested not in KINDS:
        raise ValueError(f"unknown mock user {requested!r}; known: {', '.join(KINDS)}")
    voice = user_model or model
    if requested == "template":
        return UserChoice("template", None, "chosen")
    if requested == "llm":
        return UserChoice("llm", voice, "chosen")
    if voice.startswith(EMBEDDED):
        return UserChoice("template", None, "offline default")
    return UserChoice("llm", voice, "default with a non-embedded model")

CUES = ("Actually, {low}", "Change of plan: {text}", "Correction: {text}",
        "On second thought, {low}", "I changed my mind on this one: {text}",
        "Let me revise what I said before: {text}", "Update to an earlier point: {text}",
        "Scratch my earlier take. {text}")
OPENERS = ("", "Next: ", "Another thing: ", "Now, ", "Also, ", "Moving on: ")
RECAP_OPENERS = ("To recap: ", "Quick recap before we go on: ", "Recap: ")
ITEM_LEADS = ("- ", "* ")


class TemplateUser:
    name = "template"

    def __init__(self, outline: Outline, seed: int = 0, revision_cues: float = 0.0) -> None:
        if not 0.0 <= revision_cues <= 1.0:
            raise ValueError(f"revision cue rate must be in [0, 1], not {revision_cues}")
        self.outline = outline
        self.seed = seed
        self.revision_cues = revision_cues
        self._items = outline.items
        self._replacing: set[str] = set()  # items asked after an earlier version of their unit
        seen: set[str] = set()
        for query in outline.queries():
            for item_id in query.contains:
                unit = self._items[item_id].unit if item_id in self._items else ""
                if unit and unit in seen:
                    self._replacing.add(item_id)
                seen.add(unit)

    def _rng(self, query: Query) -> random.Random:
        return random.Random(f"{self.seed}:{self.outline.id}:{query.id}")

    def cue(self, item_id: str) -> str | None:
        """The cue wording (a format string of ``CUES``) the item is voiced with, or None:
        only an item replacing an earlier version, at the rate, by its own seeded draw."""
        if item_id not in self._replacing or self.revision_cues <= 0:
            return None
        rng = random.Random(f"{self.seed}:{self.outline.id}:{item_id}:revision-cue")
        return rng.choice(CUES) if rng.random() < self.revision_cues else None

    def phrase(self, item_id: str) -> str:
        """The item's text as the user says it: with its revision cue, if it has one."""
        text = self._items[item_id].text
        wording = self.cue(item_id)
        if wording is None:
            return text
        first = text.split(" ", 1)[0]
        low = text[0].lower() + text[1:] if first.istitle() and first.isalpha() else text
        return wording.format(text=text, low=low)

    def render(self, query: Query) -> str:
        rng = self._rng(query)
        opener = rng.choice(RECAP_OPENERS if query.recap else OPENERS)
        lead = rng.choice(ITEM_LEADS)
        lines = [f"{opener}{query.summary}".strip() or opener.strip() or "Please note:"]
        for item_id in query.contains:
            lines.append(f"{lead}{self.phrase(item_id)}")
        locations = [k.key for k in query.keys if k.type == "location" and k.key]
        if locations:
            lines.append("(See " + ", ".join(f"`{loc}`" for loc in locations) + ".)")
        return "\n".join(lines)

    def conversation(self) -> list[tuple[Query, str]]:
        return [(q, self.render(q)) for q in self.outline.queries()]
