"""LoCoEval's own chart: the normalized score per backend by subset, by k and by length
interval (its Tables 4/5 as grouped bars), ``normalized.png``."""

from __future__ import annotations

from typing import Any

from replay.reporting.chart import png_bytes, pyplot

GROUPS = (("by_subset", "subset"), ("by_k", "k"), ("by_l", "length l"))


def _normalized_key(summary: dict[str, Any]) -> str | None:
    for key in ("normalized_pass@1", "normalized_extract_f1", "normalized_topic_f1"):
        if any(row.get(key) is not None for per in (summary.get(g) or {} for g, _ in GROUPS)
               for rows in per.values() for row in rows.values()):
            return key
    return None


def by_group_png(summary: dict[str, Any]) -> bytes | None:
    """The normalized score per backend by subset, by k and by length interval (grouped
    bars, one panel per split); None without outlines."""
    key = _normalized_key(summary)
    if key is None:
        return None
    panels = [(label, summary[g]) for g, label in GROUPS if summary.get(g)]
    names = [n for n in summary["backends"] if n not in ("empty", "oracle")]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    width = 0.8 / max(1, len(names))
    for ax, (label, groups) in zip(axes[0], panels, strict=True):
        for i, name in enumerate(names):
            values = [(groups[g].get(name) or {}).get(key) for g in groups]
            xs = [n + i * width for n in range(len(groups))]
            ax.bar(xs, [v if v is not None else 0.0 for v in values], width, label=name)
        ax.set_xticks([n + width * (len(names) - 1) / 2 for n in range(len(groups))])
        ax.set_xticklabels(list(groups), fontsize=8)
        ax.axhline(0, color="#888", linewidth=0.6)
        ax.set_title(f"{key.replace('normalized_', 'norm. ')} % by {label}", fontsize=9)
    axes[0][0].legend(fontsize=7)
    return png_bytes(fig)
