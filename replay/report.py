"""Per-backend results from the pairs of a run: results.json and a rich table."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from replay.metrics import compression, normalized

SCORES = ("topic_f1", "extract_f1", "pass@1", "recall", "stale")


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _scores_of(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    topic, extract, passed, recall, stale, ctx = [], [], [], [], [], []
    ia, ca, ifr = [], [], []
    for row in rows:
        s = row.get("scores") or {}
        if s.get("topic_f1") is not None:
            topic.append(float(s["topic_f1"]))
        extract += [float(v) for v in (s.get("extract_f1") or {}).values()]
        passed += [1.0 if v else 0.0 for v in (s.get("passed") or {}).values()]
        recall += [float(v) for v in (s.get("recall") or {}).values()]
        stale += [float(v) for v in (s.get("stale") or {}).values()]
        ctx += [float(v) for v in (s.get("context_tokens") or {}).values()]
        it = row.get("iterative") or {}
        ia += it.get("ia", [])
        ca += it.get("ca", [])
        ifr += it.get("ifr", [])[1:]  # nothing can be forgotten at the first turn
    return {"topic_f1": _mean(topic), "extract_f1": _mean(extract), "pass@1": _mean(passed),
            "recall": _mean(recall), "stale": _mean(stale), "context_tokens": _mean(ctx),
            "ia": _mean(ia), "ca": _mean(ca), "ifr": _mean(ifr)}


def summarize(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per backend: mean scores, tokens, compression vs full, normalized scores."""
    backends = list(dict.fromkeys(p["backend"] for p in pairs))
    per: dict[str, dict[str, Any]] = {}
    for name in backends:
        rows = [p for p in pairs if p["backend"] == name]
        per[name] = {"pairs": len(rows), "errors": sum(1 for r in rows if r.get("error")),
                     "tokens": sum(int(r.get("tokens") or 0) for r in rows),
                     "sources": sorted({r["source"] for r in rows}), **_scores_of(rows)}
    if "full" in per:
        for name, row in per.items():
            # compression over the sources both ran
            common = set(row["sources"]) & set(per["full"]["sources"])
            mine = sum(int(p.get("tokens") or 0) for p in pairs
                       if p["backend"] == name and p["source"] in common)
            full = sum(int(p.get("tokens") or 0) for p in pairs
                       if p["backend"] == "full" and p["source"] in common)
            row["compression"] = compression(mine, full)
    if "empty" in per and "oracle" in per:
        for row in per.values():
            for key in ("topic_f1", "extract_f1", "pass@1"):
                low, high, value = per["empty"][key], per["oracle"][key], row[key]
                row[f"normalized_{key}"] = (normalized(value, low, high)
                                            if None not in (low, high, value) else None)
    return {"backends": per, "pairs": len(pairs)}


def write_results(out: Path, pairs: list[dict[str, Any]], config: dict[str, Any]) -> Path:
    path = out / "results.json"
    data = {"config": config, **summarize(pairs), "runs": pairs}
    path.write_text(json.dumps(data, indent=2, default=str))
    return path


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


COLUMNS = (("topic F1", "topic_f1", 2), ("extract F1", "extract_f1", 2),
           ("pass@1", "pass@1", 2), ("recall", "recall", 2), ("stale", "stale", 2),
           ("ctx tok", "context_tokens", 0), ("tokens", "tokens", 0),
           ("compr.", "compression", 2), ("IA", "ia", 2), ("CA", "ca", 2), ("IFR", "ifr", 2))


def table(summary: dict[str, Any]) -> Any:
    """A rich table with the columns some backend has a value for."""
    from rich.table import Table

    rows = summary["backends"]
    shown = [c for c in COLUMNS if any(r.get(c[1]) is not None for r in rows.values())]
    out = Table(title="engram replay")
    out.add_column("backend", no_wrap=True)
    out.add_column("pairs", justify="right", no_wrap=True)
    for title, _, _ in shown:
        out.add_column(title, justify="right", no_wrap=True)
    for name, row in rows.items():
        pairs = f"{row['pairs']}" + (f" ({row['errors']} err)" if row["errors"] else "")
        out.add_row(name, pairs, *(_fmt(row.get(key), digits) for _, key, digits in shown))
    return out
