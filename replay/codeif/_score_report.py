"""Aggregates and Rich tables for ``engram replay score``: per requirement category and per
turn, for each grading mode; pass@k by the unbiased estimator over (task, turn) items."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from replay.core.metrics import pass_at_k


def _mean(values: list[float | None]) -> float | None:
    real = [v for v in values if v is not None]
    return statistics.fmean(real) if real else None


def _pass_at(rows: list[dict[str, Any]], ks: list[int]) -> dict[str, float | None]:
    items: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for row in rows:
        items[(row["task_id"], row["turn"])].append(bool(row["passed"]))
    out: dict[str, float | None] = {}
    for k in ks:
        values = [pass_at_k(len(v), sum(v), k) for v in items.values() if len(v) >= k]
        out[f"pass@{k}"] = statistics.fmean(values) if values else None
    return out


def group(rows: list[dict[str, Any]], ks: list[int]) -> dict[str, Any]:
    """Answers graded and passed, pass@k over (task, turn) items, mean IA / CA / IFR where
    defined, agreement with the benchmark's verdicts (rows: ``task_id``, ``turn``,
    ``passed``; optional ``ia``, ``ca``, ``ifr``, ``benchmark``)."""
    graded = [r for r in rows if r["passed"] is not None]
    compared = [r for r in graded if r.get("benchmark") is not None]
    return {"answers": len(graded), "passed": sum(1 for r in graded if r["passed"]),
            "skipped": len(rows) - len(graded), **_pass_at(graded, ks),
            "ia": _mean([r.get("ia") for r in graded]),
            "ca": _mean([r.get("ca") for r in graded]),
            "ifr": _mean([r.get("ifr") for r in graded]),
            "compared": len(compared),
            "agree": sum(1 for r in compared if r["benchmark"] == r["passed"])}


def summarize(rows: list[dict[str, Any]], samples: int | None = None) -> dict[str, Any]:
    """Per mode: totals, per category and per turn (answers graded, passed, pass@k, mean
    IA / CA / IFR where defined, agreement with the benchmark's own verdicts)."""
    per_item: dict[tuple[str, str, int], int] = defaultdict(int)
    for row in rows:
        if row["passed"] is not None:
            per_item[(row["mode"], row["task_id"], row["turn"])] += 1
    most = samples or max(per_item.values(), default=1)
    ks = sorted({1, most})
    out: dict[str, Any] = {"ks": ks, "short_items": sum(1 for n in per_item.values() if n < most),
                           "modes": {}}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = [r for r in rows if r["mode"] == mode]
        categories = list(dict.fromkeys(r["category"] for r in sorted(
            mine, key=lambda r: (r["category"] != "base", r["turn"]))))
        out["modes"][mode] = {
            "total": group(mine, ks),
            "by_category": {c: group([r for r in mine if r["category"] == c], ks)
                            for c in categories},
            "by_turn": {str(t): group([r for r in mine if r["turn"] == t], ks)
                        for t in sorted({r["turn"] for r in mine})},
        }
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def turn_table(title: str, first: str, groups: dict[str, dict[str, Any]], ks: list[int],
               follow: bool, agreement: bool) -> Any:
    """A table of ``group`` results, one row per label (IA; CA and IFR with ``follow``)."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column(first, no_wrap=True)
    columns = [("answers", "answers"), ("passed", "passed")]
    columns += [(f"pass@{k}", f"pass@{k}") for k in ks]
    columns += [("IA", "ia")]
    if follow:
        columns += [("CA", "ca"), ("IFR", "ifr")]
    for name, _ in columns:
        table.add_column(name, justify="right", no_wrap=True)
    if agreement:
        table.add_column("benchmark agrees", justify="right", no_wrap=True)
    for label, group in groups.items():
        cells = [_fmt(group.get(key)) for _, key in columns]
        if agreement:
            cells.append(f"{group['agree']}/{group['compared']}" if group["compared"] else "-")
        table.add_row(label, *cells)
    return table


def tables(data: dict[str, Any]) -> list[Any]:
    """Per mode: one table by requirement category, one by turn (IA everywhere; CA and IFR
    where the mode grades earlier turns' tests), with the total as the last row."""
    summary = data["summary"]
    out = []
    for mode, parts in summary["modes"].items():
        agreement = parts["total"]["compared"] > 0
        follow = mode != "category"
        by_category = {**parts["by_category"], "total": parts["total"]}
        by_turn = {**parts["by_turn"], "total": parts["total"]}
        out.append(turn_table(f"{mode} mode · by requirement", "category", by_category,
                          summary["ks"], follow, agreement))
        out.append(turn_table(f"{mode} mode · by turn (0 = base prompt)", "turn", by_turn,
                          summary["ks"], follow, agreement))
    return out
