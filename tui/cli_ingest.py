"""``engram memory ingest``: the sessions of Claude Code, Codex, Aider (and engram's own)
fed to a memory backend in the repository's store (``memory/ingest``)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from tui.cli_errors import CLIError
from tui.cli_options import backend_opt_argument, backend_options, say, seconds

INGEST_HELP = """\
FILES: session files (a Claude Code or Codex .jsonl, an .aider.chat.history.md, an engram
transcript), or `auto` (the default): every session of the repository where each tool
keeps it (~/.claude/projects/<repo path with / and . as ->/, ~/.codex/sessions/ whose
session names a folder of the repository, .aider.chat.history.md, engram's own sessions).
Each run takes only the turns added since the last one; --watch keeps following."""


def _seconds(value: str) -> float:
    try:
        found = float(value)
    except ValueError:
        found = float("nan")
    if not 0 <= found < float("inf"):
        raise argparse.ArgumentTypeError(f"a number of seconds (0 or more), not {value!r:.40}")
    return found


def add_parser(sub: Any) -> None:
    memory = sub.add_parser("memory", help="feed a memory backend (`engram memory ingest`)")
    verbs = memory.add_subparsers(dest="verb", required=True)
    ingest = verbs.add_parser("ingest", help="feed the turns of your sessions in other tools "
                                             "to a memory backend",
                              epilog=INGEST_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    ingest.add_argument("files", nargs="*", metavar="FILES|auto",
                        help="session files, or auto (default)")
    ingest.add_argument("--from", dest="tool", choices=("claude", "codex", "aider", "engram"),
                        default=None, help="which tool wrote them (default: every tool with "
                                           "auto, else read from each file)")
    ingest.add_argument("--backend", default="cards", help="memory backend (default: cards)")
    ingest.add_argument("--repo", default=".", help="the git repository (default: here)")
    ingest.add_argument("--data-dir", type=Path, default=None)
    ingest.add_argument("--model", default=None,
                        help="the model a backend's memory calls (default as for chat; with "
                             "the embedded model cards keeps statements as said)")
    ingest.add_argument("--watch", action="store_true",
                        help="follow live sessions until Ctrl-C (marks saved at each turn)")
    ingest.add_argument("--interval", type=seconds, default=2.0, metavar="SECONDS",
                        help="with --watch: seconds between two looks (2)")
    ingest.add_argument("--settle", type=_seconds, default=600.0, metavar="SECONDS",
                        help="a session's last turn, not closed by its tool, is taken once "
                             "its file was left alone this long (600)")
    backend_opt_argument(ingest)
    ingest.set_defaults(func=cmd_ingest)


def _line(report: Any) -> str:
    if report.error:
        return f"{report.path}: {report.error}"
    waiting = f", {report.waiting} still open" if report.waiting else ""
    skipped = f", {report.skipped} records skipped" if report.skipped else ""
    where = f" -> {report.session}" if report.session else ""
    return (f"{report.path.name} ({report.tool}): {report.turns} new turn(s)"
            f"{waiting}{skipped}{where}")


async def _follow(feeder: Any, files: list[Path] | None, args: argparse.Namespace) -> int:
    """``watch`` until Ctrl-C, which ends it between two turns (never in the middle of one)."""
    import signal

    from memory.ingest import watch

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await watch(feeder, files, args.tool, interval=args.interval, stop=stop,
                           report=lambda r: print(_line(r), flush=True))
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def cmd_ingest(args: argparse.Namespace) -> int:
    from memory._git import NotAGitRepo
    from memory.backends import UnknownBackend
    from memory.ingest import IngestOptions, ingest, open_feeder, summary
    from memory.llm.client import LLMError

    files = [Path(f) for f in args.files if f != "auto"]
    if files and "auto" in args.files:
        raise CLIError("give session files or `auto`, not both")
    for path in files:
        if not path.is_file():
            raise CLIError(f"{path}: no such session file")
    options = IngestOptions(repo=Path(args.repo), backend=args.backend, tool=args.tool,
                            model=args.model, data_dir=args.data_dir, settle=args.settle,
                            backend_options=tuple(backend_options(args).items()))
    try:
        feeder = open_feeder(options)
    except (NotAGitRepo, UnknownBackend, LLMError, ValueError) as exc:
        raise CLIError(str(exc)) from exc
    try:
        if args.watch:
            say(f"following the sessions of {feeder.env.repo.root} into {args.backend} "
                "(Ctrl-C stops; every turn taken is kept)")
            taken = asyncio.run(_follow(feeder, files or None, args))
            say(f"stopped after {taken} turn(s); the marks are saved")
            return 0
        reports = asyncio.run(ingest(feeder, files or None, args.tool))
    finally:
        feeder.close()
    for report in reports:
        print(_line(report))
    total = summary(reports)
    print(f"{total['turns']} new turn(s) from {total['files']} file(s) into {args.backend}"
          + (f"; {total['waiting']} still open" if total["waiting"] else ""))
    if not reports:
        say("no sessions found for this repository (give the files, or --from a tool)")
    return 1 if total["errors"] and not total["turns"] else 0
