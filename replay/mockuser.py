"""The template mock user, and which mock user voices an outline.

Each query renders its information items verbatim around its summary, with its
location keys named; the wording (openers, joiners) is picked by a RNG seeded from
(seed, outline id, query id), so one seed gives byte-identical conversations.

``choose_user`` picks the mock user: the LLM one (LoCoEval's, ``replay.llmuser``)
whenever a model other than the embedded one is in use, the template otherwise
(offline runs and CI), unless one is asked for by name. Its ``label`` is what the
results say ran, e.g. ``template (offline default)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from replay.outline import Outline, Query

EMBEDDED = "local/"  # the embedded offline model's provider prefix (memory/local.py)
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

OPENERS = ("", "Next: ", "Another thing: ", "Now, ", "Also, ", "Moving on: ")
RECAP_OPENERS = ("To recap: ", "Quick recap before we go on: ", "Recap: ")
ITEM_LEADS = ("- ", "* ")


class TemplateUser:
    name = "template"

    def __init__(self, outline: Outline, seed: int = 0) -> None:
        self.outline = outline
        self.seed = seed
        self._items = outline.items

    def _rng(self, query: Query) -> random.Random:
        return random.Random(f"{self.seed}:{self.outline.id}:{query.id}")

    def render(self, query: Query) -> str:
        rng = self._rng(query)
        opener = rng.choice(RECAP_OPENERS if query.recap else OPENERS)
        lead = rng.choice(ITEM_LEADS)
        lines = [f"{opener}{query.summary}".strip() or opener.strip() or "Please note:"]
        for item_id in query.contains:
            lines.append(f"{lead}{self._items[item_id].text}")
        locations = [k.key for k in query.keys if k.type == "location" and k.key]
        if locations:
            lines.append("(See " + ", ".join(f"`{loc}`" for loc in locations) + ".)")
        return "\n".join(lines)

    def conversation(self) -> list[tuple[Query, str]]:
        return [(q, self.render(q)) for q in self.outline.queries()]
