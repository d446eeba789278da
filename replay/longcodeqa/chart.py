"""LongCodeQA's panel of the run's ``chart.png``: accuracy per bracket of the context's
share of the window, one line per backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def qa_panels(summary: dict[str, Any]) -> list[Callable[[Any], None]]:
    """The accuracy curve as a panel (a function drawing on a matplotlib Axes), or none
    when no backend's row has LongCodeQA's accuracy."""
    rows = summary.get("backends") or {}
    names = list(rows)
    if not any(rows[n].get("qa_all") is not None for n in names):
        return []

    def draw(ax: Any) -> None:
        # the brackets as the rows name them: qa_<bracket> (qa_evidence_<bracket> beside)
        brackets = [k[3:] for k in rows[names[0]]
                    if k.startswith("qa_") and not k.startswith("qa_evidence_")]
        for n in names:
            ax.plot(brackets, [rows[n].get(f"qa_{b}") for b in brackets], marker="o", label=n)
        ax.set_ylim(0, 1.05)
        ax.set_title("qa accuracy by context share of the window (higher is better)",
                     fontsize=9)
        ax.legend(fontsize=7)

    return [draw]
