"""The text form of a memory card: its field labels, and reading a rendered card back.

``Card.render`` writes a head line (``[memory card ID · utility U · ...]``) and one
labelled field per line (evidence may run over several lines); the context inspector
reads that text back to show a card's fields one by one. No heavy imports: the
inspector loads it when it first shows a context.
"""

from __future__ import annotations

import re

LABELS = {"trigger": "Trigger", "evidence": "Evidence", "action_hint": "Action hint",
          "failure_if_ignored": "Failure if ignored", "scope": "Scope"}
HEAD = "[memory card "
_FIELD = re.compile(r"^(" + "|".join(re.escape(v) for v in LABELS.values()) + r"): ?(.*)$")


def card_fields(text: str) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(card id, what its head says after the id, [(label, value)]) of a rendered card, in
    the order shown; None when ``text`` is not a memory card."""
    lines = text.strip().splitlines()
    if not lines or not lines[0].startswith(HEAD) or not lines[0].endswith("]"):
        return None
    card_id, _, notes = lines[0][len(HEAD):-1].partition(" · ")
    fields: list[tuple[str, list[str]]] = []
    for line in lines[1:]:
        match = _FIELD.match(line)
        if match:
            fields.append((match.group(1), [match.group(2)]))
        elif fields:
            fields[-1][1].append(line)
    if not fields:
        return None
    return card_id, notes, [(label, "\n".join(value).strip()) for label, value in fields]
