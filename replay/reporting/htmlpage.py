"""The merged report as one self-contained HTML page: tables (rich's HTML export, inline
styles) and the charts as inlined PNGs — one file to mail or attach, nothing fetched."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

STYLE = ("body{font-family:sans-serif;margin:2em;max-width:1400px}"
         "img{max-width:100%;border:1px solid #ddd;margin:.5em 0}"
         "pre{font-size:12px}")


def _tables(summary: dict[str, Any]) -> str:
    from rich.console import Console

    from replay.reporting.report import table

    console = Console(record=True, width=200, file=io.StringIO())
    console.print(table(summary))
    return console.export_html(inline_styles=True, code_format="<pre>{code}</pre>")


def html_page(pages: list[tuple[str, dict[str, Any], dict[str, bytes]]], runs: list[str],
              replaced: int) -> str:
    """``pages``: per model (model, summary, {png name: bytes})."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             "<title>engram replay report</title>", f"<style>{STYLE}</style></head><body>",
             "<h1>engram replay report</h1>",
             f"<p>merged runs: {html.escape(', '.join(runs))}; pairs found in more than one "
             f"run: {replaced}</p>"]
    for model, summary, pngs in pages:
        parts.append(f"<h2>model {html.escape(model)}</h2>")
        for name, png in pngs.items():
            data = base64.b64encode(png).decode("ascii")
            parts.append(f"<img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>")
        parts.append(_tables(summary))
    parts.append("</body></html>")
    return "\n".join(parts)
