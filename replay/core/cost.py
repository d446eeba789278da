"""Dollar cost of a replay: per pair, per backend, and the budget that stops a run.

Every LLM call is priced when it is made (``memory.llm.client`` asks litellm's cost map for
the response's price and records it in the call's ledger, by purpose). Here the
ledgers of a pair are put side by side: the agent's (``answer`` and ``memory``), the
LLM mock user's (``mock_user``) and the LLM judge's (``judge``). A model litellm's
cost map does not know (the embedded ``local/`` model, a test's scripted one, a
self-hosted endpoint) costs $0, and the results say so.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

PARTS = ("answer", "memory", "mock_user", "judge")


def pricing(model: str | None) -> str:
    """How calls to ``model`` are priced: from litellm's cost map, or $0 and why."""
    if not model:
        return "no model"
    if model.startswith("local/"):
        return "embedded local model: $0"
    from memory.llm.client import priced_as

    name = priced_as(model)
    if name is None:
        return "not in litellm's cost map: counted as $0"
    return "litellm cost map" + ("" if name == model else f" (as {name})")


def _ledger_costs(usage: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for purpose, counts in (usage or {}).items():
        if isinstance(counts, dict):
            out[purpose] = out.get(purpose, 0.0) + float(counts.get("cost") or 0.0)
    return out


def pair_cost(agent: Any, user: Any = None, judge: Any = None) -> dict[str, float]:
    """A pair's dollars split by purpose, plus ``total``, from its ledgers' ``to_dict()``."""
    split = dict.fromkeys(PARTS, 0.0)
    for usage in (agent, user, judge):
        for purpose, cost in _ledger_costs(usage).items():
            split[purpose] = split.get(purpose, 0.0) + cost
    split["total"] = sum(v for k, v in split.items() if k != "total")
    return split


def row_cost(row: dict[str, Any]) -> float:
    cost = row.get("cost")
    return float(cost.get("total") or 0.0) if isinstance(cost, dict) else 0.0


def backend_costs(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Sum over ``rows`` of each part, and the mean total per pair (``per_pair``)."""
    out = dict.fromkeys((*PARTS, "total"), 0.0)
    for row in rows:
        for key, value in (row.get("cost") or {}).items():
            if key in out:
                out[key] += float(value or 0.0)
    out["per_pair"] = out["total"] / len(rows) if rows else 0.0
    return out


@dataclass
class Budget:
    """``--budget-usd``: launch a pair only while what is spent, what is running and what
    this pair should cost (the mean of its backend's finished pairs, else of all finished
    pairs, else 0) stay within ``limit``. Pairs already on record in the run folder count
    as spent. Once a pair is refused, no later one starts."""

    limit: float | None
    spent: float = 0.0
    finished: dict[str, list[float]] = field(default_factory=dict)  # backend -> costs
    running: dict[int, float] = field(default_factory=dict)  # launch id -> estimate
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stopped: bool = False
    _next: int = 0

    @classmethod
    def from_rows(cls, limit: float | None, rows: list[dict[str, Any]]) -> Budget:
        budget = cls(limit)
        for row in rows:
            budget.finish(str(row.get("backend")), row_cost(row))
        return budget

    def estimate(self, backend: str) -> float:
        mine = self.finished.get(backend)
        if mine:
            return statistics.fmean(mine)
        every = [c for costs in self.finished.values() for c in costs]
        return statistics.fmean(every) if every else 0.0

    def projected(self, backend: str) -> float:
        return self.spent + sum(self.running.values()) + self.estimate(backend)

    def start(self, source: str, backend: str) -> int | None:
        """A launch id, or None when the pair would pass the budget (recorded as skipped)."""
        if self.limit is not None and (self.stopped or self.projected(backend) > self.limit):
            self.stopped = True
            self.skipped.append((source, backend))
            return None
        self._next += 1
        self.running[self._next] = self.estimate(backend)
        return self._next

    def finish(self, backend: str, cost: float, launch: int | None = None) -> None:
        if launch is not None:
            self.running.pop(launch, None)
        self.spent += cost
        self.finished.setdefault(backend, []).append(cost)

    def report(self) -> dict[str, Any] | None:
        if self.limit is None:
            return None
        return {"limit_usd": self.limit, "spent_usd": self.spent, "stopped": self.stopped,
                "skipped": [f"{s}__{b}" for s, b in self.skipped]}
