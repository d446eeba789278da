"""``engram [PATH]``: the app's own command line, checked before the app opens (the
repository, the data dir, the backend, the model, a session to resume)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli_errors import CLIError
from tui.cli_models import check_model_quickly, model_arguments, use_model_settings
from tui.cli_options import (
    EXIT_USAGE,
    SUBCOMMANDS,
    TIMEOUT_HELP,
    backend_opt_argument,
    backend_options,
    llm_timeout,
    say,
    seconds,
)


def app_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram",
        description="Chat with a git repository (the Textual app). Subcommands: "
                    + ", ".join((*SUBCOMMANDS, "replay")) + " (engram SUBCOMMAND --help).",
    )
    parser.add_argument("path", nargs="?", default=".", help="the repository (default: here)")
    parser.add_argument("-c", "--continue", dest="continue_last", action="store_true",
                        help="continue the last session of this repository")
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="ID",
                        help="resume the recorded session ID (without ID: pick one)")
    parser.add_argument("--backend", default="full", help="memory backend")
    parser.add_argument("--model", default=None,
                        help="any litellm model string or an alias from the config")
    parser.add_argument("--data-dir", type=Path, default=None)
    model_arguments(parser)
    parser.add_argument("--max-tokens", type=int, default=512, help="cap on each answer")
    backend_opt_argument(parser)
    parser.add_argument("--timeout", type=seconds, default=None, metavar="SECONDS",
                        help=TIMEOUT_HELP)
    return parser


def _resume_path(repo: Path, data_dir: Path | None, session: str) -> Path:
    """The transcript of session ``session`` of ``repo``; CLIError when the id is not a
    session id (``../x``, a path) or no such session was recorded."""
    from memory._checks import valid_session_id
    from memory._git import toplevel
    from memory.home import repo_home
    from memory.transcript import sessions_dir

    if not valid_session_id(session):
        raise CLIError(f"--resume: {session[:80]!r} is not a session id (letters, digits, "
                       "'_', '.', '-'; as `/sessions` lists them)")
    home = repo_home(toplevel(repo.expanduser()), data_dir)
    path = sessions_dir(home) / f"{session}.jsonl"
    if not path.is_file():
        raise CLIError(f"--resume: no recorded session {session!r} under {sessions_dir(home)}")
    return path


def _preflight(repo: Path, data_dir: Path | None, backend: str) -> None:
    """CLIError if the app could not start: checked before it opens, not inside it."""
    import tempfile

    from memory._git import NotAGitRepo, toplevel
    from memory.backends import BackendLoadError, UnknownBackend, registry
    from memory.home import engram_home

    try:
        toplevel(repo.expanduser())
    except NotAGitRepo as exc:
        raise CLIError(str(exc)) from exc
    home = engram_home(data_dir)
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=home):
            pass
    except OSError as exc:
        raise CLIError(f"cannot write the data dir {home}: {exc.strerror or exc} "
                       "(choose another with --data-dir or ENGRAM_HOME)") from exc
    try:
        registry.spec(backend)
    except (UnknownBackend, BackendLoadError) as exc:
        raise CLIError(str(exc)) from exc


def run_app(argv: list[str]) -> int:
    args = app_parser().parse_args(argv)
    if args.resume and args.path == "." and Path(args.resume).is_dir():
        args.path, args.resume = args.resume, ""  # the older `engram --resume PATH`
    transcript = None
    try:
        _preflight(Path(args.path), args.data_dir, args.backend)
        settings = use_model_settings(args)
        check_model_quickly(args.model)
        opts = backend_options(args)
        timeout = llm_timeout(args.timeout)
        if args.resume:
            transcript = _resume_path(Path(args.path), args.data_dir, args.resume)
    except CLIError as exc:
        say(str(exc))
        return EXIT_USAGE
    from tui.app import AppOptions, EngramApp

    options = AppOptions(repo=Path(args.path), backend=args.backend, model=args.model,
                         data_dir=args.data_dir, continue_last=args.continue_last,
                         pick_session=args.resume == "", max_tokens=args.max_tokens,
                         transcript=transcript, timeout=timeout,
                         backend_options=opts, settings=settings)
    EngramApp(options).run()
    return 0
