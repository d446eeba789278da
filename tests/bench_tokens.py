"""Where a backend's prompt tokens go (not collected by pytest; run it by hand): the replay
bench (tests/bench_replay.py, the same arguments) with each answer's context counted by
section kind (system, memory, repo) and, for ``cards``, by card type and level (its
evidence apart from the fields around it), and cards' extraction turns (how many of the
developer's lines the reading placed).

    .venv/bin/python -m tests.bench_tokens BREAKDOWN.json [bench_replay's arguments]

BREAKDOWN.json holds the counts per backend and conversation; BREAKDOWN.detail.json each
cards context's cards (id, type, level, tokens, scope, utility). The bench's own summary
(``--save``) keeps the answer and memory calls' prompt tokens apart (``usage``).
"""

from __future__ import annotations

import collections
import json
import sys
from typing import Any

from memory.backends.cards import build as cards_build
from memory.backends.cards.said import said_statements
from memory.turn import agent as agent_module

COUNTS: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
    collections.Counter)
DETAIL: list[dict[str, Any]] = []


def instrument() -> None:
    pack_of, extract_of = agent_module.Agent._pack, cards_build.GraphBuilder.extract

    async def counted_pack(self: Any, backend: Any, query: str, about: str | None = None) -> Any:
        pack = await pack_of(self, backend, query, about)
        row = COUNTS[(backend.name, self.env.session_id or "")]
        row["answers"] += 1
        row["query"] += pack.query_tokens
        for section in pack.sections:
            row[f"sec:{section.kind}"] += section.tokens
        last = getattr(backend, "last_pack", None)
        if backend.name == "cards" and last is not None:
            for card in last.cards:
                row[f"card:{card.kind}:{card.level}"] += card.tokens
                row[f"n:{card.kind}:{card.level}"] += 1
                shown = card.evidence if card.level == "full" else (card.brief_evidence
                                                                      or card.evidence)
                row[f"evidence:{card.kind}"] += self.llm.count_tokens(shown)
            DETAIL.append({"session": self.env.session_id, "turn": len(self.turns),
                           "query": query[:160],
                           "cards": [[c.node_id, c.kind, c.level, c.tokens, c.scope[:80],
                                      round(c.utility, 3)] for c in last.cards]})
        return pack

    async def counted_extract(self: Any, turn: Any) -> Any:
        facts, why = await extract_of(self, turn)
        row = COUNTS[("cards-extract", self.env.session_id or "")]
        said = said_statements(turn.user)
        readings = await self.read(said) if said else []
        row["turns"] += 1
        row["lines"] += len(said)
        row["lines_placed"] += sum(1 for r in readings if r.subject)
        row["facts"] += len(facts)
        return facts, why

    agent_module.Agent._pack = counted_pack  # type: ignore[method-assign]
    cards_build.GraphBuilder.extract = counted_extract  # type: ignore[method-assign]


def main() -> None:
    out = sys.argv.pop(1)
    instrument()
    from tests import bench_replay

    try:
        bench_replay.main()
    finally:
        with open(out, "w") as f:
            json.dump({f"{b}|{s}": dict(c) for (b, s), c in COUNTS.items()}, f, indent=1)
        with open(out.removesuffix(".json") + ".detail.json", "w") as f:
            json.dump(DETAIL, f)


if __name__ == "__main__":
    main()
