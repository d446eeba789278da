"""CodeIF-Bench's own chart: IA, CA and IFR per turn, one line per backend
(``iterative.png``)."""

from __future__ import annotations

from typing import Any

from replay.reporting.chart import png_bytes, pyplot


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
