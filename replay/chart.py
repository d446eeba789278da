"""A PNG chart of a run: score and compression per backend (matplotlib, Agg, lazily).

Both panels: higher is better (compression = full's prompt tokens / the backend's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCORE_KEYS = ("pass@1", "extract_f1", "topic_f1", "ca", "recall", "qa_all")


def main_score(row: dict[str, Any]) -> tuple[str, float | None]:
    """The first score the run has: pass@1 for outlines, CA for iterative sources..."""
    for key in SCORE_KEYS:
        if row.get(key) is not None:
            return key, float(row[key])
    return "score", None


def write_chart(summary: dict[str, Any], path: Path) -> Path | None:
    """Bars of the main score and of the compression ratio (full / backend, "5.7×");
    None when nothing to draw."""
    rows = summary["backends"]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(rows)
    key = next((main_score(r)[0] for r in rows.values() if main_score(r)[1] is not None),
               "score")
    scores = [rows[n].get(key) or 0.0 for n in names]
    compression = [rows[n].get("compression") for n in names]
    curve = any(rows[n].get("qa_all") is not None for n in names)  # qa: accuracy per bracket
    panels = 1 + int(any(c is not None for c in compression)) + int(curve)
    fig, axes = plt.subplots(1, panels, figsize=(4 + 1.2 * len(names) * panels, 3.6),
                             squeeze=False)
    ax = axes[0][0]
    ax.bar(names, scores, color="#4c72b0")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{key} (higher is better)")
    for i, value in enumerate(scores):
        ax.text(i, value + 0.02, f"{value:.2f}", ha="center", fontsize=8)
    if curve:
        from replay.qa import BRACKETS

        ax = axes[0][panels - 1]
        for n in names:
            ax.plot([b for b, _ in BRACKETS], [rows[n].get(f"qa_{b}") for b, _ in BRACKETS],
                    marker="o", label=n)
        ax.set_ylim(0, 1.05)
        ax.set_title("qa accuracy by context share of the window (higher is better)",
                     fontsize=9)
        ax.legend(fontsize=7)
    if panels - int(curve) == 2:
        ax = axes[0][1]
        values = [c or 0.0 for c in compression]
        ax.bar(names, values, color="#dd8452")
        ax.set_title("compression: full's tokens / backend's (higher = less context)",
                     fontsize=9)
        for i, value in enumerate(values):
            ax.text(i, value * 1.01, f"{value:.1f}×", ha="center", fontsize=8)
    for row in axes:
        for a in row:
            a.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
