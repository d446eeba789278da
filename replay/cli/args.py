"""What every ``engram replay`` subcommand shares: the usage exit code, model arguments,
checked numbers."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TypeVar

N = TypeVar("N", int, float)

EXIT_USAGE = 2


def model_arguments(parser: argparse.ArgumentParser) -> None:
    from memory.llm.models import FORCEABLE

    parser.add_argument("--api-base", default=None, metavar="URL",
                        help="the OpenAI-compatible server of the models, e.g. "
                             "http://localhost:8000/v1 (default: $ENGRAM_API_BASE, else the "
                             "config's \"api_base\")")
    parser.add_argument("--structured", default=None, choices=FORCEABLE, metavar="MODE",
                        help="force a structured-output mode (" + ", ".join(FORCEABLE)
                             + "); default: the strongest the endpoint accepts")


def use_settings(args: argparse.Namespace) -> Any:
    """The settings of this command (config file, environment, then ``--model``,
    ``--api-base``, ``--structured``), checked (ValueError) and installed for the
    command's scope; replay's config carries them to the workers."""
    from memory import settings
    from memory.llm.models import check_api_base, check_structured

    if args.api_base:
        check_api_base(args.api_base)
    if args.structured:
        check_structured(args.structured)
    return settings.install(settings.load({
        "model": getattr(args, "model", None), "api_base": args.api_base,
        "structured": args.structured}))


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
