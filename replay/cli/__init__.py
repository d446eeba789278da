"""``engram replay``: run, score, build, report, demo (``replay.cli.command``)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """The ``engram.commands`` entry point (imported lazily: ``engram`` loads it by name)."""
    from replay.cli.command import main as run

    return run(argv)
