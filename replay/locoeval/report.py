"""LoCoEval's numbers in a run's report: its scores in each backend's row, oracle's and
the normalized scores, the splits by subset, k and l, the judge's accuracy check, and the
volume of ``full`` beside the paper's.

What each number is (also the legend):
- topic F1, extract F1: LoCoEval's set F1 of the topic-awareness and item-extraction
  tasks (higher is better). ``oracle``'s are 1 by definition (its measured value beside).
- pass@1: share of generation tasks whose function passes its tests (higher is better).
- norm. X %: 100 * (X - empty) / (oracle - empty): 0 = no better than no memory,
  100 = as good as the ground truth (higher is better); "-" when oracle = empty.
- ctx recall / ctx stale: reader-free, in the ContextPack of each generation task: share
  of the sample's true items present (higher is better) and share of stale (distractor)
  items among the items present (lower is better).
Every score is also split by subset (single-hop / multi-hop), by k (samples per outline)
and by l (the conversation's length, in intervals of 10).
"""

from __future__ import annotations

import statistics
from typing import Any

from replay.core.metrics import normalized, pass_at_k
from replay.core.window import UNBOUNDED

NORMALIZED = ("topic_f1", "extract_f1", "pass@1")
BY_DEFINITION = ("topic_f1", "extract_f1")  # oracle's value is 1 by definition
COLUMNS = (("topic F1 ↑", "topic_f1", 2), ("extract F1 ↑", "extract_f1", 2),
           ("pass@1 ↑", "pass@1", 2), ("norm. topic ↑", "normalized_topic_f1", 0),
           ("norm. extract ↑", "normalized_extract_f1", 0),
           ("norm. pass@1 ↑", "normalized_pass@1", 0),
           ("ctx recall ↑", "recall", 2), ("ctx stale ↓", "stale", 2),
           ("ctx tok", "context_tokens", 0))
SPLIT_COLUMNS = (("extract F1 ↑", "extract_f1", 2), ("pass@1 ↑", "pass@1", 2),
                 ("norm. extract ↑", "normalized_extract_f1", 0),
                 ("norm. pass@1 ↑", "normalized_pass@1", 0),
                 ("ctx recall ↑", "recall", 2), ("ctx stale ↓", "stale", 2),
                 ("compression ↑", "compression", 1))
LEGEND = ("F1: LoCoEval set F1 (oracle: 1 by definition, measured in brackets). norm.: "
          "100·(s − empty)/(oracle − empty) %. ctx recall / stale: true items present / stale "
          "share of the items present in the task-time context.")
PAPER_FULL = "LoCoEval's Full: 3.2-4.4 M per sample, Table 4"


def legend(summary: dict[str, Any]) -> str:
    """The legend of its columns, when some backend has a value in one of them."""
    rows = (summary.get("backends") or {}).values()
    shown = any(row.get(key) is not None for row in rows for _, key, _ in COLUMNS)
    return LEGEND if shown else ""


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One backend's LoCoEval scores over its pairs (None where it has none)."""
    topic, extract, passed, recall, stale, ctx = [], [], [], [], [], []
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
    return {"topic_f1": _mean(topic), "extract_f1": _mean(extract), "pass@1": _mean(passed),
            "recall": _mean(recall), "stale": _mean(stale), "context_tokens": _mean(ctx)}


def finish(per: dict[str, dict[str, Any]]) -> None:
    """Oracle's F1 is 1 by definition (its measured value kept beside); with ``empty`` and
    ``oracle`` rows, every backend's scores normalized between them."""
    if "oracle" in per:
        row = per["oracle"]
        for key in BY_DEFINITION:
            row[f"{key}_measured"] = row[key]
            if row[key] is not None:
                row[key] = 1.0
    if "empty" in per and "oracle" in per:
        for row in per.values():
            for key in NORMALIZED:
                low, high, value = per["empty"][key], per["oracle"][key], row[key]
                row[f"normalized_{key}"] = (normalized(value, low, high)
                                            if None not in (low, high, value) else None)


def judge_check(pairs: list[dict[str, Any]]) -> dict[str, Any] | None:
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


def summary(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The splits by subset, k and l (per backend, as the main table's rows) and the
    judge's accuracy check."""
    from replay.reporting.report import per_backend

    def split(key: str) -> dict[str, dict[str, dict[str, Any]]]:
        values = sorted({str(p[key]) for p in pairs if p.get(key) is not None})
        return {v: per_backend([p for p in pairs if str(p.get(key)) == v]) for v in values}

    groups: dict[str, list[dict[str, Any]]] = {}
    for p in pairs:
        if isinstance(p.get("l"), int):
            groups.setdefault(l_interval(p["l"]), []).append(p)
    by_l = {k: per_backend(groups[k]) for k in sorted(groups, key=_interval_start)}
    return {"by_subset": split("subset"), "by_k": split("k"), "by_l": by_l,
            "judge_check": judge_check(pairs), "voices": voices(pairs)}


def voices(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def tables(summary: dict[str, Any]) -> list[Any]:
    """The splits' tables, the volume line and the judge's accuracy line."""
    from rich.text import Text

    from replay.reporting.report import _fmt, _table

    parts: list[Any] = []
    for key, label in (("by_subset", "subset"), ("by_k", "k"), ("by_l", "l")):
        groups = summary.get(key) or {}
        if not groups:
            continue
        rows = {f"{value} · {name}": row
                for value, per in groups.items() for name, row in per.items()}
        parts.append(_table(f"by {label}", rows, SPLIT_COLUMNS, first=f"{label} · backend"))
    said = volume(summary)
    if said is not None:
        parts.append(Text(said))
    check = summary.get("judge_check")
    if check:
        accuracy = _fmt(check.get("accuracy"))
        parts.append(Text(f"judge accuracy on the outlines' truth/distractor pairs ↑: "
                          f"{accuracy} ({check['correct']}/{check['checks']} checks, "
                          f"{check['outlines']} outlines, judge {check['judge']})"))
    return parts
