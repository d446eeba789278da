"""The command lines of ``engram mcp [PATH]``, ``engram mcp install claude|codex`` and
``engram recall QUERY [--brief]``.

``recall`` is the per-prompt hook's path: it imports neither litellm nor torch and calls
no model (the kept facts, MiniLM on ONNX Runtime and git only). With ``-`` as the query
it reads Claude Code's hook input, a JSON object on stdin with a ``prompt`` field (plain
text on stdin is taken as it is).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tui.cli_errors import CLIError


def _serve_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="engram mcp", description="Serve the repository's kept memory over MCP (stdio). "
        "`engram mcp install claude|codex` prints or writes the registration.")
    p.add_argument("repo", nargs="?", default=".", help="the git repository (default: here)")
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--backend", default="cards",
                   help="the memory backend served: cards (default), mem0 or mem0r (the "
                        "backends whose memory is kept per repository)")
    return p


def _install_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="engram mcp install",
                                description="Print (or --write) engram's MCP registration.")
    p.add_argument("client", choices=("claude", "codex"))
    p.add_argument("--repo", default=".", help="the git repository served (default: here)")
    p.add_argument("--write", action="store_true",
                   help="write it (idempotent; other servers' entries are kept)")
    p.add_argument("--hook", action="store_true",
                   help="claude: also register `engram recall - --brief` as the "
                        "UserPromptSubmit hook in .claude/settings.json")
    p.add_argument("--config", type=Path, default=None,
                   help="codex: the config file (default: ~/.codex/config.toml)")
    return p


def _root(repo: str) -> Path:
    from memory._git import NotAGitRepo, toplevel

    try:
        return toplevel(Path(repo).expanduser())
    except NotAGitRepo as exc:
        raise CLIError(str(exc)) from exc


def main_mcp(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        from tui.mcp.install import InstallError, install_claude, install_codex

        args = _install_parser().parse_args(argv[1:])
        root = _root(args.repo)
        if args.hook and args.client != "claude":
            raise CLIError("--hook is for claude (Codex has no per-prompt hook)")
        try:
            if args.client == "claude":
                lines = install_claude(root, args.write, args.hook)
            else:
                config = args.config or Path.home() / ".codex" / "config.toml"
                lines = install_codex(config.expanduser(), root, args.write)
        except (InstallError, OSError) as exc:
            raise CLIError(str(exc)) from exc
        print("\n".join(lines))
        return 0
    args = _serve_parser().parse_args(argv)
    from tui.mcp.server import StartError, serve

    try:
        return serve(args.repo, args.data_dir, args.backend)
    except StartError as exc:
        raise CLIError(str(exc)) from exc


def _recall_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="engram recall",
                                description="The kept memories relevant to QUERY.")
    p.add_argument("query", help="what to recall; `-`: read it from stdin (Claude Code's "
                                 "hook input: JSON with a `prompt` field, or plain text)")
    p.add_argument("--brief", action="store_true",
                   help="the project instructions, the pinned and the few most relevant "
                        "fresh memories within a token budget, for a per-prompt hook "
                        "(prints nothing when there are none)")
    p.add_argument("--repo", default=".")
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--tokens", type=int, default=800, help="--brief's budget")
    return p


def _query_from_stdin() -> str:
    text = sys.stdin.read()
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict):
        return str(data.get("prompt") or "")
    return text


def main_recall(argv: list[str]) -> int:
    args = _recall_parser().parse_args(argv)
    query = _query_from_stdin() if args.query == "-" else args.query
    from memory.recall.brief import brief
    from memory.recall.keeper import Keeper, KeeperError

    try:
        keeper = Keeper(_root(args.repo), args.data_dir)
        if args.brief:
            if not query.strip():
                return 0  # nothing asked: nothing to add to the prompt
            text = brief(keeper, query[:2000], args.tokens, args.limit)
            if text:
                print(text)
            return 0
        for memory in keeper.recall(query, args.limit):
            print(f"{memory.id}  {memory.line()[2:]}")
    except KeeperError as exc:
        raise CLIError(str(exc)) from exc
    return 0
