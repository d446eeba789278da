"""What every ``engram replay`` subcommand shares: the usage exit code, model arguments."""

from __future__ import annotations

import argparse

EXIT_USAGE = 2


def model_arguments(parser: argparse.ArgumentParser) -> None:
    from memory.models import FORCEABLE

    parser.add_argument("--api-base", default=None, metavar="URL",
                        help="the OpenAI-compatible server of the models, e.g. "
                             "http://localhost:8000/v1 (default: $ENGRAM_API_BASE)")
    parser.add_argument("--structured", default=None, choices=FORCEABLE, metavar="MODE",
                        help="force a structured-output mode (" + ", ".join(FORCEABLE)
                             + "); default: the strongest the endpoint accepts")
