"""The PNG charts of a run (matplotlib, Agg, lazily): ``chart.png`` with the main score
and the compression per backend (both: higher is better; compression = full's prompt
tokens / the backend's), and each benchmark's own charts.

Which row key is a backend's main score, any panel added to ``chart.png`` and any chart
file of its own come from the benchmarks (``score_keys``, ``panels``, ``charts`` of the
``Benchmark`` protocol): this module names none of their keys."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

Panel = Callable[[Any], None]  # draws on one matplotlib Axes


def score_keys() -> tuple[str, ...]:
    """The registered benchmarks' main-score keys, in registry order (each its preferred
    key first)."""
    from replay.benchmark import benchmarks

    return tuple(dict.fromkeys(k for bench in benchmarks.all() for k in bench.score_keys))


def main_score(row: dict[str, Any], keys: Sequence[str] | None = None
               ) -> tuple[str, float | None]:
    """The first of ``keys`` (default: ``score_keys()``) the row has a value for."""
    for key in score_keys() if keys is None else keys:
        if row.get(key) is not None:
            return key, float(row[key])
    return "score", None


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


def charts(summary: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, bytes]:
    """A run's PNG files, name -> bytes (only those it has data for): ``chart.png`` (the
    main score, the compression, the benchmarks' panels), then each benchmark's own
    charts; a benchmark's own ``chart.png`` (an experience run's) stands in when no
    backend's row has a main score."""
    from replay.benchmark import benchmarks

    benches = benchmarks.all()
    keys = score_keys()
    own: dict[str, bytes] = {}
    for bench in benches:
        for name, png in bench.charts(summary, rows).items():
            own.setdefault(name, png)
    panels = [p for bench in benches for p in bench.panels(summary)]
    scored = any(main_score(r, keys)[1] is not None
                 for r in (summary.get("backends") or {}).values())
    out: dict[str, bytes] = {}
    main = chart_png(summary, keys, panels) if scored or "chart.png" not in own else None
    if main is not None:
        out["chart.png"] = main
    for name, png in own.items():
        out.setdefault(name, png)
    return out


def chart_png(summary: dict[str, Any], keys: Sequence[str] | None = None,
              panels: Sequence[Panel] = ()) -> bytes | None:
    """Bars of the main score and of the compression ratio (full / backend, "5.7×"), then
    ``panels``, as PNG bytes (any output location can take them); None without rows."""
    rows = summary.get("backends") or {}
    if not rows:
        return None
    keys = score_keys() if keys is None else keys
    plt = pyplot()

    names = list(rows)
    key = next((main_score(r, keys)[0] for r in rows.values()
                if main_score(r, keys)[1] is not None), "score")
    scores = [rows[n].get(key) or 0.0 for n in names]
    compression = [rows[n].get("compression") for n in names]
    shown = any(c is not None for c in compression)
    count = 1 + int(shown) + len(panels)
    fig, axes = plt.subplots(1, count, figsize=(4 + 1.2 * len(names) * count, 3.6),
                             squeeze=False)
    ax = axes[0][0]
    ax.bar(names, scores, color="#4c72b0")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{key} (higher is better)")
    for i, value in enumerate(scores):
        ax.text(i, value + 0.02, f"{value:.2f}", ha="center", fontsize=8)
    if shown:
        ax = axes[0][1]
        values = [c or 0.0 for c in compression]
        ax.bar(names, values, color="#dd8452")
        ax.set_title("compression: full's tokens / backend's (higher = less context)",
                     fontsize=9)
        for i, value in enumerate(values):
            ax.text(i, value * 1.01, f"{value:.1f}×", ha="center", fontsize=8)
    for n, panel in enumerate(panels):
        panel(axes[0][1 + int(shown) + n])
    for row in axes:
        for a in row:
            a.tick_params(axis="x", labelrotation=30, labelsize=8)
    return png_bytes(fig)
