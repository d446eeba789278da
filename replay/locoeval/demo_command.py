"""``engram replay demo [qa|experience] [options]``: the bundled benchmark, its outlines (or
its question or chain file) on its repository, run by ``engram replay``."""

from __future__ import annotations

from pathlib import Path

from replay.locoeval import DEMO

DEMO_SOURCES = {"outlines": "outlines", "qa": "qa/inventory-qa.json",
                "experience": "experience/inventory-chains.json"}


def demo_argv(rest: list[str]) -> list[str]:
    """The ``engram replay`` arguments of ``engram replay demo REST``."""
    rest = list(rest)
    which = rest.pop(0) if rest[:1] and rest[0] in DEMO_SOURCES else "outlines"
    if "--out" not in rest:
        rest += ["--out", str(Path("replay-runs") / ("demo" if which == "outlines"
                                                     else f"demo-{which}"))]
    return [str(DEMO / DEMO_SOURCES[which]), "--repo", str(DEMO / "inventory"), *rest]


def demo(argv: list[str]) -> int:
    from replay.cli.command import main

    return main(demo_argv(argv))
