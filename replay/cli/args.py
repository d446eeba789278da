"""What every ``engram replay`` subcommand shares: the usage exit code, model arguments,
checked numbers."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)

EXIT_USAGE = 2


def model_arguments(parser: argparse.ArgumentParser) -> None:
    from memory.models import FORCEABLE

    parser.add_argument("--api-base", default=None, metavar="URL",
                        help="the OpenAI-compatible server of the models, e.g. "
                             "http://localhost:8000/v1 (default: $ENGRAM_API_BASE)")
    parser.add_argument("--structured", default=None, choices=FORCEABLE, metavar="MODE",
                        help="force a structured-output mode (" + ", ".join(FORCEABLE)
                             + "); default: the strongest the endpoint accepts")


def checked(convert: Callable[[str], N], what: str, ok: Callable[[N], bool],
            need: str) -> Callable[[str], N]:
    """An argparse ``type``: ``convert`` the text (else "not WHAT"), then check it with
    ``ok`` (else "must be NEED")."""

    def parse(text: str) -> N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {need}, not {value}")
        return value

    return parse
