"""``engram mcp install claude|codex [--write] [--hook]``: the server's registration.

Claude Code reads a project's ``.mcp.json`` (``{"mcpServers": {"engram": {...}}}``) and
its hooks from ``.claude/settings.json``; Codex reads ``[mcp_servers.engram]`` from
``~/.codex/config.toml``. Without ``--write`` the entry is printed; with it, the one entry
is written and nothing else: other servers, other hooks and the rest of a TOML file are
kept byte for byte, and writing twice changes nothing the second time.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

SERVER = "engram"
HOOK_EVENT = "UserPromptSubmit"


class InstallError(ValueError):
    """The configuration cannot be read or written as asked (the message says why)."""


def command_line(repo: Path) -> tuple[str, list[str]]:
    """How a client starts the server: the ``engram`` command beside this Python (its
    virtual environment's) or on PATH, else this Python running the CLI module. Absolute
    paths: a client starts it with its own PATH."""
    beside = Path(sys.executable).parent / "engram"
    engram = str(beside) if beside.is_file() else shutil.which("engram")
    if engram:
        return engram, ["mcp", str(repo)]
    return sys.executable, ["-m", "tui.cli", "mcp", str(repo)]


def hook_command(repo: Path) -> str:
    """The shell command of the per-prompt hook (the prompt arrives on stdin as JSON)."""
    engram, args = command_line(repo)
    base = [engram, *args[:2]] if args[:2] == ["-m", "tui.cli"] else [engram]
    return shlex.join([*base, "recall", "-", "--brief", "--repo", str(repo)])


# -- Claude Code ---------------------------------------------------------------------------
def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8") or "{}")
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix or move it first") from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; fix or move it first")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".engram-tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    tmp.replace(path)


def claude_entry(repo: Path) -> dict[str, Any]:
    command, args = command_line(repo)
    return {"command": command, "args": args}


def install_claude(repo: Path, write: bool, hook: bool) -> list[str]:
    """What was (or would be) written, as lines for the developer."""
    path = repo / ".mcp.json"
    entry = claude_entry(repo)
    lines = [f"{path}:", json.dumps({"mcpServers": {SERVER: entry}}, indent=2)]
    if write:
        data = _read_json(path)
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise InstallError(f"{path}: mcpServers is not an object")
        if servers.get(SERVER) != entry:
            servers[SERVER] = entry
            _write_json(path, data)
            lines.append(f"written: {path}")
        else:
            lines.append(f"already registered: {path}")
    if hook:
        lines += install_hook(repo, write)
    return lines


def install_hook(repo: Path, write: bool) -> list[str]:
    path = repo / ".claude" / "settings.json"
    command = hook_command(repo)
    group = {"hooks": [{"type": "command", "command": command}]}
    lines = [f"{path}:", json.dumps({"hooks": {HOOK_EVENT: [group]}}, indent=2)]
    if not write:
        return lines
    data = _read_json(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: hooks is not an object")
    groups = hooks.setdefault(HOOK_EVENT, [])
    if not isinstance(groups, list):
        raise InstallError(f"{path}: hooks.{HOOK_EVENT} is not a list")
    ours = [g for g in groups if isinstance(g, dict) and any(
        isinstance(h, dict) and "recall - --brief" in str(h.get("command", ""))
        for h in g.get("hooks", []) or [])]
    if ours == [group] or any(g == group for g in ours):
        return [*lines, f"already registered: {path}"]
    hooks[HOOK_EVENT] = [g for g in groups if g not in ours] + [group]
    _write_json(path, data)
    return [*lines, f"written: {path}"]


# -- Codex ---------------------------------------------------------------------------------
def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string is JSON's


def codex_table(repo: Path) -> str:
    command, args = command_line(repo)
    return (f"[mcp_servers.{SERVER}]\ncommand = {_toml_string(command)}\n"
            f"args = [{', '.join(_toml_string(a) for a in args)}]\n")


def _table_span(lines: list[str], header: str) -> tuple[int, int] | None:
    """The lines [start, end) of the TOML table ``header`` (its header line through the
    line before the next table header), or None."""
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not lines[end].lstrip().startswith("["):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # blank lines before the next table stay where they are
    return start, end


def install_codex(config: Path, repo: Path, write: bool) -> list[str]:
    import tomllib

    table = codex_table(repo)
    lines = [f"{config}:", table.rstrip()]
    if not write:
        return lines
    text = config.read_text("utf-8") if config.is_file() else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"{config} is not valid TOML ({exc}); fix it first") from exc
    current = (data.get("mcp_servers") or {}).get(SERVER)
    command, args = command_line(repo)
    if current == {"command": command, "args": args}:
        return [*lines, f"already registered: {config}"]
    rows = text.splitlines(keepends=True)
    span = _table_span(rows, f"[mcp_servers.{SERVER}]")
    if span is None and current is not None:
        raise InstallError(f"{config} defines mcp_servers.{SERVER} in a form engram does not "
                           "rewrite (inline or dotted keys); edit it by hand to:\n" + table)
    if span is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n")
                                                            else "\n\n")
        new = text + sep + table
    else:
        start, end = span
        new = "".join(rows[:start]) + table + "".join(rows[end:])
    tomllib.loads(new)  # what is written still parses
    config.parent.mkdir(parents=True, exist_ok=True)
    tmp = config.with_name(config.name + ".engram-tmp")
    tmp.write_text(new, "utf-8")
    tmp.replace(config)
    return [*lines, f"written: {config}"]
