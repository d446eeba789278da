"""SWE-ContextBench's own chart, the ``chart.png`` of an experience run: resolved rate of
the related tasks and prompt tokens per task, per backend and setting."""

from __future__ import annotations

from typing import Any

from replay.reporting.chart import png_bytes, pyplot


def experience_png(rows: dict[str, dict[str, Any]]) -> bytes | None:
    """SWE-ContextBench's dimensions per backend and setting: resolved rate of the related
    tasks (higher is better) and prompt tokens per task (lower is better)."""
    names = [n for n, r in rows.items() if r.get("resolved") is not None]
    if not names:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(4 + 1.1 * len(names), 3.8), squeeze=False)
    resolved = [float(rows[n]["resolved"]) for n in names]
    tokens = [float(rows[n].get("prompt_tokens") or 0.0) for n in names]
    ax = axes[0][0]
    ax.bar(names, resolved, color="#4c72b0")
    ax.set_ylim(0, 1.05)
    ax.set_title("resolved rate of the related tasks (higher is better)", fontsize=9)
    for i, value in enumerate(resolved):
        ax.text(i, value + 0.02, f"{value:.2f}", ha="center", fontsize=8)
    ax = axes[0][1]
    ax.bar(names, tokens, color="#dd8452")
    ax.set_title("prompt tokens per task (lower is better)", fontsize=9)
    for i, value in enumerate(tokens):
        ax.text(i, value * 1.01, f"{value:.0f}", ha="center", fontsize=8)
    for a in axes[0]:
        a.tick_params(axis="x", labelrotation=40, labelsize=7)
    return png_bytes(fig)
