"""``engram replay report RUN_DIR [RUN_DIR...]``: runs merged into one report.

Runs that were resumed, sharded over machines, or made with different models become
one ``results.json`` (per model: the run's usual summary), one table per model, and
charts — score and compression per backend, the normalized score by subset, by k and
by length interval (LoCoEval's Table 4/5 layout), IA/CA/IFR per turn for iterative
sources — as PNG files and one self-contained HTML page (the PNGs inlined).

Each run is read from its ``pairs.jsonl`` (written as pairs finish, so a killed run
counts too); its ``results.json``, when there, names the model of rows older than the
``model`` field. A pair found in several runs (same model, source and backend) is
taken from the last run given, unless that one failed and an earlier one did not.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from replay.core.output import Output, OutputError, PairLog
from replay.reporting.report import summarize, table

EXIT_USAGE = 2


class MergeError(ValueError):
    """A run folder that cannot be read."""


@dataclass
class Merged:
    rows: list[dict[str, Any]]
    runs: list[str]
    replaced: int = 0  # pairs found in more than one run
    models: list[str] = field(default_factory=list)

    def by_model(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for row in self.rows:
            out.setdefault(str(row.get("model")), []).append(row)
        return out


def read_run(location: str) -> list[dict[str, Any]]:
    """The latest row of every pair on record in a run folder, each with its model."""
    output = Output(location)
    if not output.exists():
        raise MergeError(f"{location}: no such run folder")
    rows = PairLog(output).latest()
    if not rows:
        raise MergeError(f"{location}: no finished pairs (no readable pairs.jsonl)")
    model = None
    text = output.read_text("results.json")
    if text:
        try:
            model = (json.loads(text).get("config") or {}).get("model")
        except (json.JSONDecodeError, AttributeError):
            model = None
    for row in rows:
        row.setdefault("model", model or "unknown")
        row["run"] = location
    return rows


def merge(locations: list[str]) -> Merged:
    chosen: dict[tuple[str, str, str], dict[str, Any]] = {}
    replaced = 0
    for location in locations:
        for row in read_run(location):
            key = (str(row["model"]), str(row.get("source")), str(row.get("backend")))
            before = chosen.get(key)
            if before is not None:
                replaced += 1
                if row.get("error") and not before.get("error"):
                    continue
            chosen[key] = row
    rows = list(chosen.values())
    return Merged(rows, list(locations), replaced,
                  list(dict.fromkeys(str(r["model"]) for r in rows)))


def merged_summary(merged: Merged) -> dict[str, Any]:
    """results.json of the merge: per model the usual summary; with one model its keys at
    the top level too, so the merge reads like a run."""
    per = {model: summarize(rows) for model, rows in merged.by_model().items()}
    data: dict[str, Any] = {"merged": merged.runs, "replaced_pairs": merged.replaced,
                            "models": merged.models, "by_model": per}
    if len(per) == 1:
        data.update(next(iter(per.values())))
    return data


def charts(summary: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, bytes]:
    """PNG files of one model's summary: name -> bytes (only the charts it has data for)."""
    from replay.reporting.chart import charts as drawn

    return drawn(summary, rows)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram replay report",
        description="Merge replay runs (resumed, sharded, other models) into one "
                    "results.json, tables, PNG charts and a self-contained HTML page.")
    parser.add_argument("runs", nargs="+", help="run folders (paths or fsspec URLs)")
    parser.add_argument("--out", default=None,
                        help="where the merged report goes (default: RUN_DIR/report for one "
                             "run, else ./replay-report)")
    return parser


def main(argv: list[str]) -> int:
    from rich.console import Console

    from replay.reporting.htmlpage import html_page

    args = build_parser().parse_args(argv)
    console = Console(stderr=True)
    try:
        merged = merge(args.runs)
        out = Output(args.out or (f"{args.runs[0].rstrip('/')}/report" if len(args.runs) == 1
                                  else "replay-report"))
    except (MergeError, OutputError) as exc:
        console.print(f"engram replay report: {exc}", markup=False)
        return EXIT_USAGE
    data = merged_summary(merged)
    pages: list[tuple[str, dict[str, Any], dict[str, bytes]]] = []
    for model, rows in merged.by_model().items():
        summary = data["by_model"][model]
        pngs = charts(summary, rows)
        prefix = "" if len(merged.models) == 1 else f"{_slug(model)}-"
        for name, png in pngs.items():
            out.write_bytes(png, prefix + name)
        pages.append((model, summary, pngs))
        Console().print(f"model {model}: {len(rows)} pairs")
        Console().print(table(summary))
    path = out.write_text(json.dumps({**data, "runs": merged.rows}, indent=2, default=str),
                          "results.json")
    page = out.write_text(html_page(pages, merged.runs, merged.replaced), "report.html")
    console.print(f"merged {len(merged.runs)} run(s), {len(merged.rows)} pairs "
                  f"({merged.replaced} found twice); results: {path}  page: {page}")
    return 0


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
