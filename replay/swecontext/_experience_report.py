"""Per backend and setting, an ``experience`` source's scores (SWE-ContextBench's three
dimensions): resolved rate (accuracy), prompt tokens per task (cost), wall seconds per
task (time), each beside no experience: resolved minus none's, tokens and time as a
share of none's. Pooled over the related tasks of every source the backend ran."""

from __future__ import annotations

from typing import Any

from replay.swecontext.experience import SETTINGS


def experience_rows(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{"backend · setting": {...}}`` for the pairs that ran task chains."""
    rows: dict[str, dict[str, Any]] = {}
    for backend in dict.fromkeys(p["backend"] for p in pairs):
        tasks: dict[str, list[dict[str, Any]]] = {}
        for pair in pairs:
            settings = ((pair.get("experience") or {}).get("settings") or {}) \
                if pair["backend"] == backend else {}
            for name, setting in settings.items():
                tasks.setdefault(name, []).extend(setting.get("tasks", {}).values())
        per = {name: _means(tasks[name]) for name in SETTINGS if tasks.get(name)}
        base = per.get("none")
        for name, row in per.items():
            if base is not None:
                row["resolved_delta"] = row["resolved"] - base["resolved"]
                row["tokens_ratio"] = (row["prompt_tokens"] / base["prompt_tokens"]
                                       if base["prompt_tokens"] else None)
                row["time_ratio"] = (row["seconds"] / base["seconds"]
                                     if base["seconds"] else None)
            rows[f"{backend} · {name}"] = row
    return rows


def _means(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(tasks)
    return {"pairs": n, "errors": sum(1 for t in tasks if t.get("error")),
            "resolved": sum(1.0 for t in tasks if t.get("resolved")) / n,
            "prompt_tokens": sum(float(t.get("prompt_tokens") or 0) for t in tasks) / n,
            "seconds": sum(float(t.get("seconds") or 0) for t in tasks) / n,
            "pool_tokens": sum(float(t.get("pool_tokens") or 0) for t in tasks) / n}


EXPERIENCE_COLUMNS = (("resolved ↑", "resolved", 2), ("Δ resolved vs none ↑", "resolved_delta", 2),
                      ("prompt tok/task ↓", "prompt_tokens", 0),
                      ("tok vs none ↓", "tokens_ratio", 2), ("sec/task ↓", "seconds", 2),
                      ("time vs none ↓", "time_ratio", 2), ("pool tok", "pool_tokens", 0))
EXPERIENCE_LEGEND = (
    "SWE-ContextBench: each related task solved in a fresh conversation. resolved: share "
    "of related tasks whose tests pass; tok / time vs none: the setting's prompt tokens / "
    "seconds per task over no experience's (below 1 = cheaper / faster); pool tok: tokens "
    "the memory spent taking in the free pool before the task (apart). 'tasks' counts "
    "related tasks.")
