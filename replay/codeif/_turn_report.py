"""Per-turn IA / CA / IFR and pass@k of ``engram replay``'s iterative sources, per backend.

CodeIF-Bench reports its scores per turn; the pooled means of the main table hide where
a memory starts to forget. Each pair's ``iterative`` result becomes one row per (source,
turn) answer in the shape ``engram replay score`` grades (``task_id``, ``turn``, ``passed``,
``ia``, ``ca``, ``ifr``), plus one row per extra sample (its verdict only) when answers
were sampled, and the same aggregation and table as ``replay score`` (``_score_report``)
give the per-turn figures and pass@k by the unbiased estimator.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from replay.codeif._score_report import group, turn_table


def _at(values: list[Any] | None, n: int) -> Any:
    return values[n] if values is not None and n < len(values) else None


def turn_rows(pair: dict[str, Any]) -> list[dict[str, Any]]:
    """The graded answers of one iterative pair, as ``replay score`` rows."""
    it = pair.get("iterative") or {}
    per_turn = it.get("turns") or {}
    samples = it.get("samples") or []
    rows = []
    for n, verdict in enumerate(it.get("verdicts") or []):
        rows.append({"task_id": str(pair.get("source")), "turn": n, "passed": verdict,
                     **{key: _at(per_turn.get(key), n) for key in ("ia", "ca", "ifr")}})
        extras = (_at(samples, n) or [])[1:]  # the committed answer's verdict is first
        rows += [{"task_id": str(pair.get("source")), "turn": n, "passed": extra}
                 for extra in extras]
    return rows


def iterative_summary(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per backend with iterative pairs: ``ks`` (1 and the samples drawn), ``by_turn``
    (turn -> answers, passed, pass@k, IA, CA, IFR) and ``total``."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(p["backend"] for p in pairs if p.get("iterative")):
        rows = [r for p in pairs if p["backend"] == name and p.get("iterative")
                for r in turn_rows(p)]
        graded = Counter((r["task_id"], r["turn"]) for r in rows if r["passed"] is not None)
        ks = sorted({1, max(graded.values(), default=1)})
        out[name] = {"ks": ks,
                     "by_turn": {str(t): group([r for r in rows if r["turn"] == t], ks)
                                 for t in sorted({r["turn"] for r in rows})},
                     "total": group(rows, ks)}
    return out


def iterative_tables(summary: dict[str, dict[str, Any]]) -> list[Any]:
    """One table per backend: a row per turn (0 = the first instruction), the total last."""
    tables = []
    for name, parts in summary.items():
        rows = {**parts["by_turn"], "total": parts["total"]}
        follow = any(r.get("ca") is not None for r in rows.values())
        tables.append(turn_table(f"{name} · iterative, by turn (IA ↑, CA ↑, IFR ↓)", "turn",
                                 rows, parts["ks"], follow, agreement=False))
    return tables
