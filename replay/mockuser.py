"""The template mock user: turns an outline's queries into user messages, no LLM.

Each query renders its information items verbatim around its summary, with its
location keys named; the wording (openers, joiners) is picked by a RNG seeded from
(seed, outline id, query id), so one seed gives byte-identical conversations.
"""

from __future__ import annotations

import random

from replay.outline import Outline, Query

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
