"""What the ``engram`` command line's parts share: the exit code of a usage error, the
error line, ``--timeout`` and ``--backend-opt`` (parsed and checked), the subcommands."""

from __future__ import annotations

import argparse
import sys

from tui.cli_errors import CLIError

SUBCOMMANDS = ("ask", "chat", "index", "memories", "memory", "backends", "models")
EXIT_USAGE = 2


def say(message: str) -> None:
    """An error for the user on stderr, redacted (provider errors echo keys)."""
    from memory.redact import redact

    print(f"engram: {redact(message)}", file=sys.stderr)


def seconds(value: str) -> float:
    from memory.llm.client import parse_timeout

    try:
        return parse_timeout(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def llm_timeout(flag: float | None) -> float:
    """Seconds per LLM call: ``--timeout``, else the config file's ``timeout``, else 180."""
    from memory.llm.client import DEFAULT_TIMEOUT, parse_timeout
    from tui.config import config_path, load_config

    if flag is not None:
        return flag
    configured = load_config().get("timeout")
    if configured is None:
        return DEFAULT_TIMEOUT
    try:
        return parse_timeout(configured)
    except ValueError as exc:
        raise CLIError(f"{config_path()}: 'timeout': {exc}") from exc


TIMEOUT_HELP = ("seconds an LLM call may take (per try; streaming: per gap between pieces); "
                "default: the config file's \"timeout\", else 180")


def backend_options(args: argparse.Namespace) -> dict[str, object]:
    """``--backend-opt key=value`` pairs, checked (CLIError names the known keys)."""
    from memory.backends import registry
    from memory.backends.options import BackendOptionError, parse_options

    try:
        return parse_options(args.backend_opt or [], registry.names())
    except BackendOptionError as exc:
        raise CLIError(str(exc)) from exc


def backend_opt_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend-opt", action="append", default=[], metavar="KEY=VALUE",
                        help="a backend hyperparameter, repeatable (e.g. compact_turns=6, "
                             "memgpt_window=2000; `engram backends` lists them)")


def acting_arguments(parser: argparse.ArgumentParser) -> None:
    """``--apply`` and ``--allow-commands`` (headless: memory/acting/workbench.py's Workbench)."""
    parser.add_argument("--apply", action="store_true",
                        help="apply each answer's edits and commit them without asking "
                             "(only inside the repository; a file with uncommitted changes "
                             "is refused, other changes stay out of the commit)")
    parser.add_argument("--allow-commands", action="store_true",
                        help="with --apply: run the commands the model asks for without "
                             "asking, still in the sandbox (a copy of the tree, no network)")


def check_acting(args: argparse.Namespace, headless: bool = True) -> None:
    """CLIError for flags that do not go together."""
    if args.allow_commands and not args.apply:
        raise CLIError("--allow-commands needs --apply")
    if args.apply and not headless:
        raise CLIError("--apply needs --headless (the app shows each edit and asks)")
