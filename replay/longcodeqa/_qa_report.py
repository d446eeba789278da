"""Per-backend ``qa`` scores for the report: accuracy and evidence share per bracket.

Pooled over the sources a backend ran: correct answers / questions asked at that
bracket (not a mean of per-source means)."""

from __future__ import annotations

from typing import Any

from replay.longcodeqa.qa import BRACKETS


def qa_scores(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """``qa_<bracket>`` (accuracy) and ``qa_evidence_<bracket>`` for each bracket."""
    out: dict[str, float | None] = {}
    for name, _ in BRACKETS:
        correct = total = found = shown = 0
        for row in rows:
            bracket = ((row.get("qa") or {}).get("brackets") or {}).get(name)
            if not isinstance(bracket, dict):
                continue
            correct += int(bracket.get("correct") or 0)
            total += int(bracket.get("total") or 0)
            if bracket.get("evidence") is not None:
                found += round(float(bracket["evidence"]) * int(bracket["with_evidence"]))
                shown += int(bracket["with_evidence"])
        out[f"qa_{name}"] = correct / total if total else None
        out[f"qa_evidence_{name}"] = found / shown if shown else None
    return out


QA_COLUMNS = (("qa acc ↑", "qa_all", 2),)  # the main table: accuracy with the whole window
BRACKET_COLUMNS = tuple((f"acc {name} ↑", f"qa_{name}", 2) for name, _ in BRACKETS) + tuple(
    (f"evid. {name} ↑", f"qa_evidence_{name}", 2) for name, _ in BRACKETS)
QA_LEGEND = (" qa acc: LongCodeQA accuracy with the whole window. acc X: the same with "
             "the repository context cut at X of the window (chance = 0.25); evid. X: "
             "share of questions whose answering code was in that context.")
