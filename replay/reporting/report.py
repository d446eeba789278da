"""Per-backend results from the pairs of a run: results.json and rich tables.

The reporting knows no benchmark: each brings its own numbers through the ``Benchmark``
protocol (``scores`` of one backend's pairs, ``finish`` over the backends' rows, ``summary``
keys, ``columns`` and ``legend`` of the main table, ``report`` tables; what each of its
numbers is, its report module says). Common to every benchmark (also the legend):
- prompt tok: prompt tokens of every LLM call the agent made (answers and memory
  operations: LoCoEval's "Avg. #Token"), mean per conversation; completion tokens beside.
- compression: full's prompt tokens / the backend's, over the sources both ran, "5.7×"
  (higher = less context; full = 1×).
- mem skips: memory updates skipped or failed (no valid structured answer after the retry,
  or an error), summed over the backend's pairs (lower is better); results.json has the
  structured calls, retries, lenient parses and failures beside (``structured``).
- $ / pair, $ total: dollars of every LLM call (answers, memory, mock user, judge) by
  litellm's cost map; a model it does not price costs $0 (the pricing line says so).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from replay.benchmark import benchmarks
from replay.core.cost import backend_costs
from replay.core.metrics import compression
from replay.core.output import Output


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _usage(row: dict[str, Any], key: str) -> int:
    return sum(int(c.get(key) or 0) for c in (row.get("usage") or {}).values()
               if isinstance(c, dict))


def _scores_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One backend's scores: each benchmark's (``Benchmark.scores``), then the tokens of
    every LLM call of its pairs."""
    found: dict[str, Any] = {}
    for bench in benchmarks.all():
        found.update(bench.scores(rows))
    return {**found,
            "prompt_tokens": _mean([float(_usage(r, "prompt_tokens")) for r in rows]),
            "completion_tokens": _mean([float(_usage(r, "completion_tokens")) for r in rows])}


def _structured(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The pairs' structured-call counts summed, and the memory updates skipped or failed
    (None for a backend that made no structured call and skipped nothing)."""
    totals: dict[str, int] = {}
    for row in rows:
        for key, value in (row.get("structured") or {}).items():
            totals[key] = totals.get(key, 0) + int(value)
    skips = totals.get("skipped", 0) + totals.get("errors", 0)
    used = totals.get("calls", 0) or skips
    return {"structured": totals or None, "mem_skips": skips if used else None}


def per_backend(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One row per backend over ``pairs``: means, compression, normalized scores."""
    per: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(p["backend"] for p in pairs):
        rows = [p for p in pairs if p["backend"] == name]
        costs = backend_costs(rows)
        per[name] = {"pairs": len(rows), "errors": sum(1 for r in rows if r.get("error")),
                     "tokens": sum(int(r.get("tokens") or 0) for r in rows),
                     "sources": sorted({r["source"] for r in rows}), **_scores_of(rows),
                     "cost_usd": costs["total"], "cost_per_pair": costs["per_pair"],
                     "cost_split": {k: v for k, v in costs.items()
                                    if k not in ("total", "per_pair")},
                     **_structured(rows)}
    for bench in benchmarks.all():  # rows a benchmark places against others (oracle's)
        bench.finish(per)
    if "full" in per:
        for name, row in per.items():
            common = set(row["sources"]) & set(per["full"]["sources"])
            mine = sum(_usage(p, "prompt_tokens") for p in pairs
                       if p["backend"] == name and p["source"] in common)
            full = sum(_usage(p, "prompt_tokens") for p in pairs
                       if p["backend"] == "full" and p["source"] in common)
            row["compression"] = compression(mine, full) if full else None
    return per


def summarize(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per backend over all pairs, then each benchmark's own keys (``Benchmark.summary``:
    LoCoEval's splits by subset, k and l, SWE-ContextBench's settings, ...)."""
    summary: dict[str, Any] = {"backends": per_backend(pairs), "pairs": len(pairs)}
    for bench in benchmarks.all():
        summary.update(bench.summary(pairs))
    summary.update({
        "sandbox": sorted({str(p["sandbox"]) for p in pairs if p.get("sandbox")}),
        "windows": sorted({int(p["window"]) for p in pairs if isinstance(p.get("window"), int)}),
        "settings": _settings(pairs)})
    return summary


def _settings(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per backend, how it ran (``backend_settings`` of its pairs; the first pair's)."""
    found: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        if pair.get("backend_settings") and pair["backend"] not in found:
            found[pair["backend"]] = dict(pair["backend_settings"])
    return found


def write_results(out: Path | str | Output, pairs: list[dict[str, Any]],
                  config: dict[str, Any], **extra: Any) -> str:
    """results.json in the run's output location (a folder or an fsspec URL); ``extra``:
    more top-level keys (pricing, budget)."""
    output = out if isinstance(out, Output) else Output(out)
    data = {"config": config, **summarize(pairs), **extra, "runs": pairs}
    return output.write_text(json.dumps(data, indent=2, default=str), "results.json")


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def cell(row: dict[str, Any], key: str, digits: int) -> str:
    value = row.get(key)
    if key == "compression":
        return "-" if value is None else f"{value:.1f}×"
    if key.startswith("cost_"):
        return "-" if value is None else f"${value:.4f}"
    if key.startswith("normalized_"):
        return "-" if value is None else f"{value:.0f}%"
    text = _fmt(value, digits)
    measured = row.get(f"{key}_measured")  # a value set by definition (oracle's F1 is 1)
    if measured is not None and value is not None:
        text = f"{value:g} ({measured:.{digits}f})"
    return text


Column = tuple[str, str, int]  # (header, key, digits); ↑ higher is better, ↓ lower is better
COMMON = (("prompt tok ↓", "prompt_tokens", 0), ("compl. tok", "completion_tokens", 0),
          ("compression ↑", "compression", 1), ("mem skips ↓", "mem_skips", 0),
          ("$ / pair ↓", "cost_per_pair", 4), ("$ total", "cost_usd", 4))
LEGEND = ("↑ higher is better, ↓ lower is better. prompt tok: mean prompt tokens per "
          "conversation, every LLM call of the agent (memory included); compression: full's "
          "prompt tokens / the backend's (higher = less context). mem skips: memory updates "
          "skipped or failed. $: litellm's prices of every LLM call (answers, memory, mock "
          "user, judge).")


def columns() -> tuple[Column, ...]:
    """The main table's columns: each benchmark's (``Benchmark.columns``), then the common."""
    found: list[Column] = []
    for bench in benchmarks.all():
        found += bench.columns
    return (*found, *COMMON)


def legend(summary: dict[str, Any]) -> str:
    """The main table's legend: the common part and each benchmark's (``Benchmark.legend``,
    given the summary: a benchmark may say nothing when the run has none of its rows)."""
    return LEGEND + "".join(" " + said for bench in benchmarks.all()
                            if (said := bench.legend(summary)))


def _table(title: str, rows: dict[str, dict[str, Any]], columns: tuple[tuple[str, str, int], ...],
           first: str = "backend", caption: str | None = None) -> Any:
    from rich.table import Table

    shown = [c for c in columns if any(r.get(c[1]) is not None for r in rows.values())]
    out = Table(title=title, caption=caption, caption_justify="left")
    out.add_column(first, no_wrap=True)
    out.add_column("pairs", justify="right", no_wrap=True)
    for header, _, _ in shown:
        out.add_column(header, justify="right", no_wrap=True)
    for name, row in rows.items():
        pairs = f"{row['pairs']}" + (f" ({row['errors']} err)" if row["errors"] else "")
        out.add_row(name, pairs, *(cell(row, key, digits) for _, key, digits in shown))
    return out


SANDBOXES = {
    "bwrap": "bubblewrap OS jail (namespaces, uid 65534, process limit)",
    "weak": "WEAK: the kernel refused namespaces; Python audit hook only, which native "
            "code can get past",
}


def sandbox_line(modes: list[str]) -> Any:
    """Which sandbox the generated code's tests ran in (None: no test ran)."""
    from rich.text import Text

    if not modes:
        return None
    said = "; ".join(f"{m} ({SANDBOXES.get(m, '?')})" for m in modes)
    return Text(f"sandbox: {said}", style="yellow" if "weak" in modes else "")


def table(summary: dict[str, Any]) -> Any:
    """The run's tables: per backend (all columns some backend has), then each benchmark's
    own (``Benchmark.report``, in registry order), then how the run went."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [_table("engram replay", summary["backends"], columns(),
                               caption=legend(summary))]
    for bench in benchmarks.all():  # each benchmark's own tables (splits, experience...)
        parts += bench.report(summary)
    for backend, settings in (summary.get("settings") or {}).items():
        parts.append(Text(f"{backend}: " + ", ".join(f"{k} {v}" for k, v in settings.items())))
    sandbox = sandbox_line(summary.get("sandbox") or [])
    if sandbox is not None:
        parts.append(sandbox)
    for model, how in (summary.get("pricing") or {}).items():
        parts.append(Text(f"pricing: {model}: {how}"))
    budget = summary.get("budget")
    if budget:
        skipped = budget.get("skipped") or []
        parts.append(Text(f"budget: ${budget['spent_usd']:.4f} of ${budget['limit_usd']:.4f} "
                          + (f"spent; stopped, {len(skipped)} pair(s) not launched (--resume "
                             "with a higher --budget-usd runs them)" if budget["stopped"]
                             else "spent"), style="yellow" if budget["stopped"] else ""))
    return Group(*parts)
