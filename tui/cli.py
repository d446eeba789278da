"""The ``engram`` command line: headless ask / chat (``--apply``: edits applied and
committed, memory/acting/workbench.py) / index / backends.

Heavy modules (litellm, torch, lancedb) are imported inside the commands, so
``engram --help`` answers at once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from tui.cli_app import run_app
from tui.cli_errors import CLIError
from tui.cli_ingest import add_parser as add_ingest
from tui.cli_models import cmd_models, model_arguments, structured_summary, use_model_settings
from tui.cli_options import (
    EXIT_USAGE,
    SUBCOMMANDS,
    TIMEOUT_HELP,
    acting_arguments,
    backend_opt_argument,
    backend_options,
    check_acting,
    llm_timeout,
    say,
    seconds,
)

__all__ = ["CLIError", "build_parser", "llm_timeout", "main"]

def _offline_env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@contextmanager
def _progress(console: Any, label: str) -> Iterator[Callable[[int, int, str], None]]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{label}: {what[:50]}")

        yield update


def _session(args: argparse.Namespace, console: Any, *, record: bool = True) -> Any:
    from memory._git import NotAGitRepo
    from memory.backends import UnknownBackend
    from memory.llm.client import LLMError
    from memory.session import SessionOptions, open_session

    settings = use_model_settings(args)
    options = SessionOptions(repo=Path(args.repo), backend=args.backend, model=args.model,
                             settings=settings,
                             data_dir=args.data_dir, max_tokens=args.max_tokens, record=record,
                             shared_memory=args.shared_memory, preload=True,
                             backend_options=tuple(backend_options(args).items()),
                             timeout=llm_timeout(args.timeout))
    try:
        with _progress(console, "indexing") as progress:
            session = open_session(options, progress)
    except (NotAGitRepo, UnknownBackend, LLMError) as exc:
        raise CLIError(str(exc)) from exc
    console.print(f"[dim]index: {session.report.summary()}[/dim]")
    return session


async def _answer(session: Any, query: str, out: TextIO, bench: Any = None) -> bool:
    def echo(piece: str) -> None:
        out.write(piece)
        out.flush()

    turn = await session.agent.ask(query, on_token=echo)
    out.write("\n")
    out.flush()
    if session.agent.placed.over:  # never cut: said
        say(session.agent.placed.note())
    if not turn.ok:
        say(f"the answer failed: {turn.error}")
    if turn.meta.get("stopped"):
        say("stopped: the answer repeated itself; what streamed after its first copy is not "
            "kept in the answer or the transcript")
    if bench is not None:
        await asyncio.to_thread(_act, session, bench, turn)
    return turn.ok


def _workbench(session: Any, args: argparse.Namespace) -> Any:
    """With ``--apply``: the session's Workbench (commands allowed in advance only with
    ``--allow-commands``); what the engine will refuse is said on stderr first."""
    if not args.apply:
        return None
    from memory.acting.edits import gitstate
    from memory.acting.tools.consent import ConsentPolicy
    from memory.acting.workbench import Workbench

    root = session.agent.env.repo.root
    consent = ConsentPolicy.preallowed() if args.allow_commands else ConsentPolicy.deny_all()
    # without --allow-commands the model is not offered the run tool at all (no one is
    # there to consent, so every call would be refused after costing it a step)
    bench = Workbench(session.agent, root, consent, commands=args.allow_commands)
    if bench.offered.limited:  # the embedded model: answers from the code, nothing applied
        say(f"--apply: {bench.offered.notice(session.agent.llm.model)}")
    try:
        dirty = [line for line in gitstate.text(root, "status", "--porcelain").splitlines()
                 if line.strip()]
        busy = gitstate.operation_in_progress(root)
    except gitstate.GitFailed as exc:
        raise CLIError(str(exc)) from exc
    if busy:
        say(f"--apply: the repository is in the middle of {busy}: every edit will be "
            "refused until it is finished")
    if dirty:
        say(f"--apply: {len(dirty)} path(s) have uncommitted changes or are untracked: an "
            "edit to one of them is refused (nothing is stashed or written), and they stay "
            "out of engram's commits")
    if args.allow_commands and (why := bench.tools.runner.jail.available()) is not None:
        say(f"--allow-commands: the sandbox does not work here ({why}); no command will run")
    return bench


def _act(session: Any, bench: Any, turn: Any) -> None:
    """Apply the turn's edits, if it has any, and say what happened on stderr."""
    prepared = bench.propose(turn)
    if prepared is None:
        return
    applied = bench.apply(prepared, turn)  # a refused proposal is recorded as refused too
    if not applied.ok:
        say(f"edit refused: {applied.message}")
        return
    say(f"edit applied: {', '.join(applied.paths)} (commit {applied.commit[:10]})")
    if applied.index_error:  # the commit stands; the index catches up next time
        say(f"the index could not be refreshed after the edit: {applied.index_error}")


def cmd_ask(args: argparse.Namespace) -> int:
    from rich.console import Console

    check_acting(args)
    console = Console(stderr=True)
    session = _session(args, console)
    console.print(f"[dim]model {session.agent.llm.model}, backend {args.backend}[/dim]")
    bench = _workbench(session, args)
    ok = asyncio.run(_answer(session, args.question, sys.stdout, bench))
    structured_summary(session.agent, console)
    return 0 if ok else 1


def cmd_chat(args: argparse.Namespace) -> int:
    check_acting(args, headless=args.headless)
    if not args.headless:
        return run_app([args.repo, "--backend", args.backend, "--max-tokens",
                        str(args.max_tokens)] + (["--model", args.model] if args.model else [])
                       + (["--data-dir", str(args.data_dir)] if args.data_dir else [])
                       + [f"--backend-opt={pair}" for pair in args.backend_opt]
                       + (["--backend-opt=shared_memory=true"] if args.shared_memory else [])
                       + (["--timeout", str(args.timeout)] if args.timeout else [])
                       + (["--api-base", args.api_base] if args.api_base else [])
                       + (["--structured", args.structured] if args.structured else []))
    from rich.console import Console

    console = Console(stderr=True)
    session = _session(args, console)
    console.print(f"[dim]session {session.session_id}: {session.transcript_path}[/dim]")
    bench = _workbench(session, args)

    async def loop() -> int:
        failures = 0
        for line in sys.stdin:
            query = line.strip()
            if query:
                failures += 0 if await _answer(session, query, sys.stdout, bench) else 1
        await session.agent.end_session()  # cards keeps a summary for later sessions
        structured_summary(session.agent, console)
        return 1 if failures else 0

    return asyncio.run(loop())


def cmd_index(args: argparse.Namespace) -> int:
    import atexit
    import gc

    from rich.console import Console

    from memory._git import NotAGitRepo
    from memory.index.repo import open_index

    console = Console(stderr=True)
    try:
        with _progress(console, "indexing") as progress:
            _, report = open_index(Path(args.repo), args.data_dir, progress=progress)
    except NotAGitRepo as exc:
        raise CLIError(str(exc)) from exc
    print(report.summary())
    # The interpreter's last garbage collection walks every object the imports made
    # (lancedb's and pydantic's classes) only to free memory the OS takes back at exit:
    # 0.4 of a one-file refresh's ~2.3 CPU s. Everything is written by now (LanceDB
    # commits each write, the manifest is renamed into place), so at exit those objects
    # are left out of it; an in-process caller goes on collecting as before.
    atexit.register(gc.freeze)
    return 0


def cmd_memories(args: argparse.Namespace) -> int:
    from memory._git import NotAGitRepo
    from memory.recall.memories import MemoryListingError, list_memories

    try:
        print(list_memories(Path(args.repo), args.backend, session=args.session,
                            shared=args.shared_memory, data_dir=args.data_dir))
    except (NotAGitRepo, MemoryListingError) as exc:
        raise CLIError(str(exc)) from exc
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    from memory.backends import registry
    from memory.backends.options import describe

    for name, spec in registry.specs().items():
        print(f"{name:12} {spec.target}  ({spec.origin})")
    print(f"options (--backend-opt KEY=VALUE):\n{describe()}")
    return 0


APP_USAGE = """\
the app:
  engram [PATH]            chat with the git repository at PATH (default: here)
  engram -c [PATH]         continue the last session of the repository
  engram [PATH] --resume   pick a recorded session to resume
  engram [PATH] --resume ID   resume the recorded session ID
  engram [PATH] --backend NAME --model MODEL --data-dir DIR --max-tokens N --timeout S
  engram [PATH] --model openai/NAME --api-base http://localhost:8000/v1   a served model

more commands:
  engram mcp [PATH]        serve the repository's kept memory over MCP (stdio);
                           `engram mcp install claude|codex [--write] [--hook]`
  engram recall QUERY      the kept memories relevant to QUERY (--brief: for a hook)
  engram replay ...        re-drive recorded or mock-user conversations and score them
                           (engram replay --help)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram",
        description="A terminal coding assistant with pluggable conversational memory.",
        epilog=APP_USAGE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command")

    def session_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--repo", default=".", help="the git repository (default: here)")
        p.add_argument("--backend", default="full", help="memory backend (`engram backends`)")
        p.add_argument("--model", default=None,
                       help="any litellm model string or an alias from the config; default: "
                            "a keyed provider's small model, else the embedded local/smollm2")
        p.add_argument("--data-dir", type=Path, default=None,
                       help="where indexes and sessions live (default: $ENGRAM_HOME or the "
                            "platform data dir)")
        p.add_argument("--max-tokens", type=int, default=512, help="cap on each answer")
        p.add_argument("--timeout", type=seconds, default=None, metavar="SECONDS",
                       help=TIMEOUT_HELP)
        p.add_argument("--shared-memory", action="store_true",
                       help="memory backends keep one store per repository, shared by sessions")
        backend_opt_argument(p)
        model_arguments(p)
        acting_arguments(p)

    ask = sub.add_parser("ask", help="answer one question about the repository")
    ask.add_argument("question")
    session_args(ask)
    ask.set_defaults(func=cmd_ask)

    chat = sub.add_parser("chat", help="a recorded conversation")
    chat.add_argument("--headless", action="store_true",
                      help="read queries from stdin, one per line")
    session_args(chat)
    chat.set_defaults(func=cmd_chat)

    index = sub.add_parser("index", help="build or refresh the repository index")
    index.add_argument("--repo", default=".")
    index.add_argument("--data-dir", type=Path, default=None)
    index.set_defaults(func=cmd_index)

    memories = sub.add_parser("memories", help="list a memory backend's memories and history")
    memories.add_argument("--repo", default=".")
    memories.add_argument("--backend", default="mem0",
                          help="mem0, mem0r, codemem, cards, compact, amem, ldagent or memgpt")
    memories.add_argument("--session", default=None,
                          help="session id (default: the latest session of the repository)")
    memories.add_argument("--shared-memory", action="store_true",
                          help="the repository-wide store instead of a session's")
    memories.add_argument("--data-dir", type=Path, default=None)
    memories.set_defaults(func=cmd_memories)

    add_ingest(sub)

    backends = sub.add_parser("backends", help="list the registered memory backends")
    backends.set_defaults(func=cmd_backends)

    models = sub.add_parser("models", help="list the embedded models, the default model, "
                                           "aliases and learned structured modes")
    models.add_argument("--forget", action="store_true",
                        help="forget the structured modes learned from servers")
    models.add_argument("--model", default=None, help="show the settings with this model")
    model_arguments(models)  # --api-base / --structured: shown as set by a flag
    models.set_defaults(func=cmd_models)
    return parser


COMMANDS_GROUP = "engram.commands"  # more subcommands, e.g. ``replay`` (from the replay package)


def _plugin_command(name: str) -> Any:
    """The ``main(argv)`` of a subcommand registered in ``engram.commands``, or None."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=COMMANDS_GROUP):
        if ep.name == name:
            return ep.load()
    return None


def main(argv: list[str] | None = None) -> int:
    from memory.redact import install_log_redaction
    from memory.settings import scope as settings_scope

    _offline_env()
    install_log_redaction()
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["mcp"], ["recall"]):  # the MCP server, its install and the hook
        from tui.mcp.command import main_mcp, main_recall

        try:
            return (main_mcp if argv[0] == "mcp" else main_recall)(argv[1:])
        except CLIError as exc:
            say(str(exc))
            return EXIT_USAGE
    # a plugin command is a bare word; scanning entry points costs ~60 ms of the app's start
    named = bool(argv) and argv[0] not in SUBCOMMANDS and not argv[0].startswith(("-", ".", "/"))
    plugin = _plugin_command(argv[0]) if named else None
    if plugin is not None:
        return int(plugin(argv[1:]))
    if not argv or argv[0] not in (*SUBCOMMANDS, "-h", "--help"):
        with settings_scope():
            return run_app(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with settings_scope():  # what the command installs ends with it
            return int(args.func(args))
    except CLIError as exc:
        say(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
