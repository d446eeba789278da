"""LoCoMo's rows and table: per backend, per category by number, categories 1-4 pooled
(what most papers report) and category 5 apart.

Pooled over the conversations a backend ran (means over questions, not of per-conversation
means): F1 (LoCoMo's score: token F1, category 1's partial credit, category 5's "not
available"), J (the LLM judge's share of CORRECT, categories 1-4), evidence recall by turn
and by session (over the evidence turns the conversation has), evidence recall per
question (the share of its evidence turns in its context, averaged over the questions that
have evidence: how LoCoMo's evaluation averages its recall@k), context tokens per question,
and seconds per conversation (feeding + questions).
"""

from __future__ import annotations

import statistics
from typing import Any

GROUPS = ("1", "2", "3", "4", "1-4", "5")


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _group(answers: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [float(a["score"]) for a in answers if a.get("score") is not None]
    judged = [float(bool(a["j"])) for a in answers if a.get("j") is not None]
    evidence = sum(int(a.get("evidence") or 0) for a in answers)
    return {"questions": len(answers), "f1": _mean(scored), "j": _mean(judged),
            "judged": len(judged),
            "recall": sum(int(a.get("found") or 0) for a in answers) / evidence
            if evidence else None,
            "session_recall": sum(int(a.get("session_found") or 0) for a in answers) / evidence
            if evidence else None,
            "question_recall": _mean([int(a.get("found") or 0) / int(a["evidence"])
                                      for a in answers if a.get("evidence")]),
            "context_tokens": _mean([float(a["context_tokens"]) for a in answers
                                     if a.get("context_tokens") is not None])}


def summary(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """``{backend: {"conversations", "seconds", "reader_free", "unchanged", "by_category":
    {group: row}}}`` over the LoCoMo pairs ({} when there are none)."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(p["backend"] for p in pairs if p.get("locomo")):
        rows = [p for p in pairs if p["backend"] == name and p.get("locomo")]
        answers = [a for r in rows for a in r["locomo"].get("answers") or []]
        by: dict[str, list[dict[str, Any]]] = {g: [] for g in GROUPS}
        for answer in answers:
            category = str(answer.get("category"))
            if category in by:
                by[category].append(answer)
            if category in ("1", "2", "3", "4"):
                by["1-4"].append(answer)
        unchanged = [r["locomo"].get("state_unchanged") for r in rows]
        out[name] = {
            "conversations": len(rows),
            "seconds": _mean([float(r.get("seconds") or 0) for r in rows]),
            "reader_free": all(r["locomo"].get("reader_free") for r in rows),
            "unchanged": None if None in unchanged else all(unchanged),
            "unknown_evidence": sum(int(a.get("unknown_evidence") or 0) for a in answers),
            "by_category": {g: _group(a) for g, a in by.items() if a}}
    return out


def _fmt(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


COLUMNS = (("F1 ↑", "f1", 3), ("J ↑", "j", 3), ("ev. recall ↑", "recall", 3),
           ("ev. recall / q ↑", "question_recall", 3), ("ev. session ↑", "session_recall", 3),
           ("ctx tok / q", "context_tokens", 0))
LEGEND = ("LoCoMo, categories by number (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop "
          "in LoCoMo's release; papers name them differently), 1-4 pooled, 5 (adversarial) "
          "apart. F1: LoCoMo's own scoring (Porter-stemmed token F1; category 1 partial credit "
          "over comma parts; 5: says 'not mentioned' / 'no information available'). J: LLM "
          "judge, share CORRECT (--judge-model). ev. recall: evidence turns whose text is in "
          "the context (pooled over turns); / q: its mean over the questions (LoCoMo's "
          "recall, questions without evidence left out); ev. session: evidence turns whose "
          "session has a turn in the context. ctx tok: memory's "
          "context per question (system prompt excluded). s/conv: seconds per conversation.")


def tables(found: dict[str, Any]) -> list[Any]:
    """The per-category table (rich), or nothing without LoCoMo pairs."""
    if not found:
        return []
    from rich.table import Table
    from rich.text import Text

    shown = [c for c in COLUMNS if any(row.get(c[1]) is not None
                                       for b in found.values()
                                       for row in b["by_category"].values())]
    table = Table(title="LoCoMo by category", caption=LEGEND, caption_justify="left")
    for header in ("backend", "cat.", "questions", *(c[0] for c in shown), "s / conv"):
        table.add_column(header, justify="left" if header == "backend" else "right",
                         no_wrap=True)
    for name, per in found.items():
        for group, row in per["by_category"].items():
            first = group == next(iter(per["by_category"]))
            table.add_row(name if first else "", group, str(row["questions"]),
                          *(_fmt(row.get(key), digits) for _, key, digits in shown),
                          _fmt(per["seconds"], 1) if first else "")
    parts: list[Any] = [table]
    changed = [n for n, per in found.items() if per["unchanged"] is False]
    if changed:
        parts.append(Text(f"LoCoMo: the memory of {', '.join(changed)} changed while its "
                          "questions were asked (commit=False should leave it as it was)",
                          style="red"))
    unknown = {n: per["unknown_evidence"] for n, per in found.items() if per["unknown_evidence"]}
    if unknown:
        parts.append(Text("LoCoMo: evidence ids the conversation does not have (not counted): "
                          + ", ".join(f"{n} {k}" for n, k in unknown.items())))
    return parts
