"""Per-backend results from the pairs of a run: results.json and rich tables.

What each number is (also the tables' legend):
- topic F1, extract F1: LoCoEval's set F1 of the topic-awareness and item-extraction
  tasks (higher is better). ``oracle``'s are 1 by definition (its measured value beside).
- pass@1: share of generation tasks whose function passes its tests (higher is better).
- norm. X %: 100 * (X - empty) / (oracle - empty): 0 = no better than no memory,
  100 = as good as the ground truth (higher is better); "-" when oracle = empty.
- ctx recall / ctx stale: reader-free, in the ContextPack of each generation task: share
  of the sample's true items present (higher is better) and share of stale (distractor)
  items among the items present (lower is better).
- prompt tok: prompt tokens of every LLM call the agent made (answers and memory
  operations: LoCoEval's "Avg. #Token"), mean per conversation; completion tokens beside.
- compression: full's prompt tokens / the backend's, over the sources both ran, "5.7×"
  (higher = less context; full = 1×).
- mem skips: memory updates skipped or failed (no valid structured answer after the retry,
  or an error), summed over the backend's pairs (lower is better); results.json has the
  structured calls, retries, lenient parses and failures beside (``structured``).
- IA, CA (higher is better), IFR (lower is better): CodeIF-Bench, iterative sources; pooled
  in the main table, per turn (with pass@k when answers were sampled) in one table per
  backend.
- $ / pair, $ total: dollars of every LLM call (answers, memory, mock user, judge) by
  litellm's cost map; a model it does not price costs $0 (the pricing line says so).
- experience (SWE-ContextBench), per backend and setting: resolved rate of the related
  tasks (higher is better) and its difference to no experience; prompt tokens and seconds
  per task (lower is better) and as a share of no experience's.
- acc X (higher is better): LongCodeQA accuracy with the repository context cut at X of
  the window; evid. X: share of questions whose answering code was in that context.
Every score is also split by subset (single-hop / multi-hop) and by k (samples per outline).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from replay.agentic._report import agentic_rows
from replay.benchmark import benchmarks
from replay.codeif._turn_report import iterative_summary
from replay.core.cost import backend_costs
from replay.core.metrics import compression, normalized, pass_at_k
from replay.core.output import Output
from replay.core.window import UNBOUNDED
from replay.longcodeqa._qa_report import BRACKET_COLUMNS, QA_COLUMNS, QA_LEGEND, qa_scores
from replay.swecontext._experience_report import (
    experience_rows,
)

NORMALIZED = ("topic_f1", "extract_f1", "pass@1")
BY_DEFINITION = ("topic_f1", "extract_f1")  # oracle's value is 1 by definition


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _usage(row: dict[str, Any], key: str) -> int:
    return sum(int(c.get(key) or 0) for c in (row.get("usage") or {}).values()
               if isinstance(c, dict))


def _scores_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    topic, extract, passed, recall, stale, ctx = [], [], [], [], [], []
    ia, ca, ifr = [], [], []
    for row in rows:
        s = row.get("scores") or {}
        if s.get("topic_f1") is not None:
            topic.append(float(s["topic_f1"]))
        extract += [float(v) for v in (s.get("extract_f1") or {}).values()]
        drawn = s.get("passes") or {}  # --samples N: pass@1 by the unbiased estimator
        for key, ok in (s.get("passed") or {}).items():
            verdicts = drawn.get(key)
            passed.append(pass_at_k(len(verdicts), sum(map(bool, verdicts)), 1) if verdicts
                          else float(bool(ok)))
        recall += [float(v) for v in (s.get("recall") or {}).values()]
        stale += [float(v) for v in (s.get("stale") or {}).values()]
        ctx += [float(v) for v in (s.get("context_tokens") or {}).values()]
        it = row.get("iterative") or {}
        ia += it.get("ia", [])
        ca += it.get("ca", [])
        ifr += it.get("ifr", [])[1:]  # nothing can be forgotten at the first turn
    return {"topic_f1": _mean(topic), "extract_f1": _mean(extract), "pass@1": _mean(passed),
            "recall": _mean(recall), "stale": _mean(stale), "context_tokens": _mean(ctx),
            "ia": _mean(ia), "ca": _mean(ca), "ifr": _mean(ifr),
            "prompt_tokens": _mean([float(_usage(r, "prompt_tokens")) for r in rows]),
            "completion_tokens": _mean([float(_usage(r, "completion_tokens")) for r in rows]),
            **qa_scores(rows)}


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


def _per_backend(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
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
    if "oracle" in per:
        row = per["oracle"]
        for key in BY_DEFINITION:
            row[f"{key}_measured"] = row[key]
            if row[key] is not None:
                row[key] = 1.0
    if "full" in per:
        for name, row in per.items():
            common = set(row["sources"]) & set(per["full"]["sources"])
            mine = sum(_usage(p, "prompt_tokens") for p in pairs
                       if p["backend"] == name and p["source"] in common)
            full = sum(_usage(p, "prompt_tokens") for p in pairs
                       if p["backend"] == "full" and p["source"] in common)
            row["compression"] = compression(mine, full) if full else None
    if "empty" in per and "oracle" in per:
        for row in per.values():
            for key in NORMALIZED:
                low, high, value = per["empty"][key], per["oracle"][key], row[key]
                row[f"normalized_{key}"] = (normalized(value, low, high)
                                            if None not in (low, high, value) else None)
    return per


def _judge_check(pairs: list[dict[str, Any]]) -> dict[str, Any] | None:
    checks: dict[str, dict[str, Any]] = {}
    for row in pairs:
        if isinstance(row.get("judge_check"), dict):
            checks[str(row["source"])] = row["judge_check"]
    total = sum(int(c.get("checks") or 0) for c in checks.values())
    if not checks:
        return None
    correct = sum(int(c.get("correct") or 0) for c in checks.values())
    names = sorted({str(c.get("judge", "")) for c in checks.values()} - {""})
    return {"outlines": len(checks), "checks": total, "correct": correct,
            "accuracy": correct / total if total else None, "judge": ",".join(names)}


L_WIDTH = 10  # LoCoEval's length intervals: [30, 40), [40, 50), ...


def l_interval(length: int) -> str:
    low = length // L_WIDTH * L_WIDTH
    return f"[{low}, {low + L_WIDTH})"


def _interval_start(label: str) -> int:
    return int(label[1:].split(",")[0])


def summarize(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per backend over all pairs, and split by subset and by k (outline sources)."""
    def split(key: str) -> dict[str, dict[str, dict[str, Any]]]:
        values = sorted({str(p[key]) for p in pairs if p.get(key) is not None})
        return {v: _per_backend([p for p in pairs if str(p.get(key)) == v]) for v in values}

    def by_l() -> dict[str, dict[str, dict[str, Any]]]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for p in pairs:
            if isinstance(p.get("l"), int):
                groups.setdefault(l_interval(p["l"]), []).append(p)
        return {k: _per_backend(groups[k]) for k in sorted(groups, key=_interval_start)}

    return {"backends": _per_backend(pairs), "by_subset": split("subset"), "by_k": split("k"),
            "by_l": by_l(),
            "judge_check": _judge_check(pairs), "pairs": len(pairs),
            "experience": experience_rows(pairs),
            "agentic": agentic_rows(pairs),
            "iterative": iterative_summary(pairs),
            "sandbox": sorted({str(p["sandbox"]) for p in pairs if p.get("sandbox")}),
            "windows": sorted({int(p["window"]) for p in pairs
                               if isinstance(p.get("window"), int)}),
            "voices": _voices(pairs),
            "settings": _settings(pairs)}


def _voices(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The outline voices the pairs were said in (``replay.locoeval.voice``), each once; a
    phrasing file's ``covered`` and ``items`` summed over its outlines (each counted once,
    whatever the backends)."""
    found: dict[str, dict[str, Any]] = {}
    counted: set[tuple[str, str]] = set()
    for pair in pairs:
        voice = pair.get("voice")
        if not isinstance(voice, dict):
            continue
        same = {k: v for k, v in voice.items() if k not in ("covered", "items")}
        key = repr(sorted(same.items()))
        row = found.setdefault(key, dict(same))
        if "covered" in voice and (key, str(pair.get("source"))) not in counted:
            counted.add((key, str(pair.get("source"))))
            row["covered"] = row.get("covered", 0) + int(voice["covered"])
            row["items"] = row.get("items", 0) + int(voice.get("items") or 0)
    return list(found.values())


PAPER_FULL = "LoCoEval's Full: 3.2-4.4 M per sample, Table 4"


def volume(summary: dict[str, Any]) -> str | None:
    """``full``'s prompt tokens per conversation (of outline sources) next to the paper's,
    and the window the run had; None without a ``full`` row on outlines."""
    full = (summary.get("backends") or {}).get("full") or {}
    if full.get("prompt_tokens") is None or full.get("recall") is None:
        return None
    windows = summary.get("windows") or []
    said = ", ".join("unbounded" if w >= UNBOUNDED else f"{w:,}" for w in windows)
    return (f"full: {full['prompt_tokens'] / 1e6:.2f} M prompt tokens per conversation "
            f"({PAPER_FULL}); window: {said or '-'}")


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
    measured = row.get(f"{key}_measured")
    if key in BY_DEFINITION and measured is not None:
        text = f"1 ({measured:.{digits}f})"  # oracle: 1 by definition (measured)
    return text


# (header, key, digits); ↑ higher is better, ↓ lower is better
COLUMNS = (("topic F1 ↑", "topic_f1", 2), ("extract F1 ↑", "extract_f1", 2),
           ("pass@1 ↑", "pass@1", 2), ("norm. topic ↑", "normalized_topic_f1", 0),
           ("norm. extract ↑", "normalized_extract_f1", 0),
           ("norm. pass@1 ↑", "normalized_pass@1", 0),
           ("ctx recall ↑", "recall", 2), ("ctx stale ↓", "stale", 2),
           ("ctx tok", "context_tokens", 0), ("prompt tok ↓", "prompt_tokens", 0),
           ("compl. tok", "completion_tokens", 0), ("compression ↑", "compression", 1),
           ("IA ↑", "ia", 2), ("CA ↑", "ca", 2), ("IFR ↓", "ifr", 2),
           ("mem skips ↓", "mem_skips", 0), *QA_COLUMNS,
           ("$ / pair ↓", "cost_per_pair", 4), ("$ total", "cost_usd", 4))
SPLIT_KEYS = ("pass@1", "normalized_pass@1", "extract_f1", "normalized_extract_f1",
              "recall", "stale", "compression")
LEGEND = ("↑ higher is better, ↓ lower is better. F1: LoCoEval set F1 (oracle: 1 by "
          "definition, measured in brackets). norm.: 100·(s − empty)/(oracle − empty) %. "
          "ctx recall / stale: true items present / stale share of the items present in the "
          "task-time context. prompt tok: mean prompt tokens per conversation, every LLM call "
          "of the agent (memory included); compression: full's prompt tokens / the "
          "backend's (higher = less context). mem skips: memory updates skipped or failed. "
          "$: litellm's prices of every LLM call (answers, memory, mock user, judge).")


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
    """The run's tables: per backend (all columns some backend has), then the main scores
    split by subset and by k, then the judge's accuracy on truth/distractor pairs."""
    from rich.console import Group
    from rich.text import Text

    qa = any(r.get("qa_all") is not None for r in summary["backends"].values())
    parts: list[Any] = [_table("engram replay", summary["backends"], COLUMNS,
                               caption=LEGEND + (QA_LEGEND if qa else ""))]
    if qa:
        parts.append(_table("qa: accuracy by context bracket (share of the window)",
                            summary["backends"], BRACKET_COLUMNS))
    split_columns = tuple(c for c in COLUMNS if c[1] in SPLIT_KEYS)
    for key, label in (("by_subset", "subset"), ("by_k", "k"), ("by_l", "l")):
        groups = summary.get(key) or {}
        if len(groups) < 1:
            continue
        rows = {f"{value} · {name}": row
                for value, per in groups.items() for name, row in per.items()}
        parts.append(_table(f"by {label}", rows, split_columns, first=f"{label} · backend"))
    for bench in benchmarks.all():  # each benchmark's own tables (experience, iterative...)
        parts += bench.report(summary)
    for backend, settings in (summary.get("settings") or {}).items():
        parts.append(Text(f"{backend}: " + ", ".join(f"{k} {v}" for k, v in settings.items())))
    said = volume(summary)
    if said is not None:
        parts.append(Text(said))
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
    check = summary.get("judge_check")
    if check:
        accuracy = _fmt(check.get("accuracy"))
        parts.append(Text(f"judge accuracy on the outlines' truth/distractor pairs ↑: "
                          f"{accuracy} ({check['correct']}/{check['checks']} checks, "
                          f"{check['outlines']} outlines, judge {check['judge']})"))
    return Group(*parts)
