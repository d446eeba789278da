"""A PNG chart of a run: score and compression per backend (matplotlib, Agg, lazily).

Both panels: higher is better (compression = full's prompt tokens / the backend's)."""

from __future__ import annotations

import io
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
    """Bars of the main score and of the compression ratio (full / backend, "5.7×") in a
    PNG file; None when nothing to draw."""
    png = chart_png(summary)
    if png is None:
        return None
    path.write_bytes(png)
    return path


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_bytes(fig: Any, dpi: int = 110) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=dpi)
    pyplot().close(fig)
    return buffer.getvalue()


def chart_png(summary: dict[str, Any]) -> bytes | None:
    """The chart of ``write_chart`` as PNG bytes (any output location can take them); an
    experience run gets its own (``experience_png``)."""
    rows = summary["backends"]
    if summary.get("experience") and all(main_score(r)[1] is None for r in rows.values()):
        return experience_png(summary["experience"])
    if not rows:
        return None
    plt = pyplot()

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
        # the brackets as the rows name them: qa_<bracket> (qa_evidence_<bracket> beside)
        brackets = [k[3:] for k in rows[names[0]]
                    if k.startswith("qa_") and not k.startswith("qa_evidence_")]
        ax = axes[0][panels - 1]
        for n in names:
            ax.plot(brackets, [rows[n].get(f"qa_{b}") for b in brackets], marker="o", label=n)
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
    return png_bytes(fig)


GROUPS = (("by_subset", "subset"), ("by_k", "k"), ("by_l", "length l"))


def _normalized_key(summary: dict[str, Any]) -> str | None:
    for key in ("normalized_pass@1", "normalized_extract_f1", "normalized_topic_f1"):
        if any(row.get(key) is not None for per in (summary.get(g) or {} for g, _ in GROUPS)
               for rows in per.values() for row in rows.values()):
            return key
    return None


def by_group_png(summary: dict[str, Any]) -> bytes | None:
    """The normalized score per backend by subset, by k and by length interval (grouped
    bars, one panel per split: LoCoEval's Table 4/5 as a chart); None without outlines."""
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


def turn_means(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[float | None]]]:
    """Per backend, per metric (ia, ca, ifr): the mean over its iterative sources at each
    turn (None where no source defines that turn)."""
    out: dict[str, dict[str, list[float | None]]] = {}
    for name in dict.fromkeys(r["backend"] for r in rows if r.get("iterative")):
        mine = [r["iterative"].get("turns") or {} for r in rows
                if r["backend"] == name and r.get("iterative")]
        out[name] = {}
        for key in ("ia", "ca", "ifr"):
            series = [t.get(key) or [] for t in mine]
            length = max((len(s) for s in series), default=0)
            means: list[float | None] = []
            for n in range(length):
                values = [s[n] for s in series if n < len(s) and s[n] is not None]
                means.append(sum(values) / len(values) if values else None)
            out[name][key] = means
    return out


def iterative_png(rows: list[dict[str, Any]]) -> bytes | None:
    """IA, CA (higher is better) and IFR (lower is better) per turn, one line per backend;
    None without iterative sources."""
    curves = turn_means(rows)
    if not curves:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), squeeze=False)
    for ax, (key, title) in zip(axes[0], (("ia", "IA ↑"), ("ca", "CA ↑"), ("ifr", "IFR ↓")),
                                strict=True):
        for name, per in curves.items():
            points = [(n + 1, v) for n, v in enumerate(per[key]) if v is not None]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=name)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("turn")
        ax.set_title(f"{title} per turn", fontsize=9)
    axes[0][0].legend(fontsize=7)
    return png_bytes(fig)


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
