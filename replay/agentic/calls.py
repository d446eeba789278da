"""A recorded session's tool calls, in engram's tool vocabulary, looked up by what a
replayed model asks.

Every recorded call is put in the terms of engram's repository tools
(``memory/acting/tools/``): ``read_file(path, start, end)``, ``grep(pattern, glob)``,
``list_files(glob)``, ``search_code(query, k)``, ``run(command)``, and sorted by what a
replay does with it:

- ``read``: answered from the record when the replayed model asks the same thing;
- ``test``: never answered from the record, always run again in the jail;
- ``command``: another command; its recorded output is given for the same command;
- ``edit`` / ``other``: kept for the counts only (a replayed model edits through its
  answer's edit blocks; a sub-agent or a web fetch is not replayed).

Claude Code's ``Read``/``Grep``/``Glob``/``LS`` and the reading shell commands of
Claude Code's ``Bash`` and Codex's ``shell`` (``cat``, ``sed -n A,Bp``, ``head``,
``rg``/``grep``, ``ls``/``find``/``rg --files``/``git ls-files``) map to the read tools;
``pytest``, ``python -m pytest``, ``tox``, ``make test`` and the like are tests.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from memory.acting.tools.run import TESTS
from memory.records import ToolRecord

READS = ("read_file", "grep", "list_files", "search_code")
TEST_WORDS = re.compile(r"(^|[\s/])(py\.test|pytest|tox|nox)(\s|$)"
                        r"|python3?\s+-m\s+(pytest|unittest)"
                        r"|(^|\s)make\s+(test|check)\b|(npm|yarn|pnpm)\s+(run\s+)?test\b"
                        r"|(go|cargo)\s+test\b")
SHELLS = {"bash", "sh", "zsh"}
EDITS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch"}


def is_test(command: str) -> bool:
    """Whether a command runs the project's tests (``tests``: engram's test command)."""
    text = " ".join(command.split())
    return text == TESTS or bool(TEST_WORDS.search(text))


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _path(raw: Any, root: str = "") -> str:
    """A path relative to the repository: ``root`` (the session's directory) taken off
    an absolute one, ``./`` off a relative one."""
    text = str(raw or "").strip()
    if root and text.startswith(root.rstrip("/") + "/"):
        text = text[len(root.rstrip("/")) + 1:]
    while text.startswith("./"):
        text = text[2:]
    return text


def canonical(function: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` as a lookup compares them (defaults filled in, numbers as numbers)."""
    if function == "read_file":
        return {"path": _path(args.get("path")), "start": max(1, _int(args.get("start"), 1)),
                "end": max(0, _int(args.get("end"), 0))}
    if function == "grep":
        return {"pattern": str(args.get("pattern", "")), "glob": str(args.get("glob", "")).strip()}
    if function == "list_files":
        return {"glob": str(args.get("glob", "")).strip()}
    if function == "search_code":
        return {"query": str(args.get("query", "")).strip(), "k": _int(args.get("k"), 5)}
    if function == "run":
        return {"command": " ".join(str(args.get("command", "")).split())}
    return dict(args)


@dataclass(frozen=True)
class RecordedCall:
    """One recorded call in engram's terms: the user turn it followed (index into the
    session's queries), the engram function and arguments (canonical), what the
    recording tool called it, its output, whether it worked, and its kind."""

    turn: int
    function: str
    args: dict[str, Any]
    kind: str  # read | test | command | edit | other
    result: str | None  # None: no result was recorded
    ok: bool = True
    tool: str = ""  # the recording tool's own name (Read, Bash, shell, read_file...)

    def covers(self, function: str, args: dict[str, Any]) -> bool:
        """Whether this call's output answers ``function(args)`` (both canonical): the
        same call, or a read of the same file whose lines include those asked."""
        if function != self.function or self.result is None:
            return False
        if args == self.args:
            return True
        if function != "read_file" or args["path"] != self.args["path"] or not self.ok:
            return False
        start, end = self.args["start"], self.args["end"]
        return start <= args["start"] and (end == 0 or 0 < args["end"] <= end)


@dataclass
class ToolLog:
    """A session's recorded calls and the lookups made against them."""

    calls: list[RecordedCall] = field(default_factory=list)

    def find(self, function: str, args: dict[str, Any], turn: int) -> RecordedCall | None:
        """The recorded call answering ``function(args)`` (not a test: tests always run
        again): from the same turn first, then the nearest earlier turn, then later."""
        wanted = canonical(function, args)
        found = [c for c in self.calls if c.kind in ("read", "command")
                 and c.covers(function, wanted)]
        if not found:
            return None
        return min(found, key=lambda c: (0, turn - c.turn) if c.turn <= turn
                   else (1, c.turn - turn))

    def counts(self) -> dict[str, int]:
        counted: dict[str, int] = {}
        for call in self.calls:
            counted[call.kind] = counted.get(call.kind, 0) + 1
        return counted

    # -- engram transcripts ----------------------------------------------------------------
    @classmethod
    def from_engram(cls, records: Iterable[ToolRecord], turns: dict[int, int]) -> ToolLog:
        """engram's ``tool`` records; ``turns`` maps a recorded turn index to the query's
        position (records of turns not replayed are left out)."""
        log = cls()
        for record in records:
            if record.turn not in turns:
                continue
            args = canonical(record.function, record.args)
            if record.function in READS:
                kind = "read"
            elif record.function == "run":
                kind = "test" if is_test(args["command"]) else "command"
            else:
                kind = "other"  # a backend's memory function (memgpt's)
            log.calls.append(RecordedCall(turns[record.turn], record.function, args, kind,
                                          record.result, record.ok, record.function))
        return log

    def add_edits(self, records: Iterable[dict[str, Any]], turns: dict[int, int]) -> None:
        """engram's ``edit`` records of applied answers (``memory.acting.workbench``), counted as
        the session's edits (a replayed model makes its own)."""
        for record in records:
            turn = record.get("turn")
            if record.get("op") == "applied" and isinstance(turn, int) and turn in turns:
                self.calls.append(RecordedCall(turns[turn], "edit",
                                               {"paths": record.get("paths", [])}, "edit",
                                               record.get("message", ""), True, "edit"))

    # -- Claude Code and Codex CLI ---------------------------------------------------------
    @classmethod
    def from_foreign(cls, calls: Iterable[Any], root: str) -> ToolLog:
        """``replay.sessions.foreign.ForeignCall``s of a Claude Code or Codex session whose
        working directory was ``root``."""
        log = cls()
        for call in calls:
            mapped = foreign_call(call.tool, call.input, root)
            if mapped is None:
                continue
            function, args, kind = mapped
            log.calls.append(RecordedCall(max(0, call.query), function, args, kind,
                                          call.result, call.ok, call.tool))
        return log


def foreign_call(tool: str, given: Any, root: str) -> tuple[str, dict[str, Any], str] | None:
    """(engram function, canonical args, kind) of a Claude Code or Codex tool call."""
    given = given if isinstance(given, dict) else {"input": given}
    if tool == "Read":
        start = max(1, _int(given.get("offset"), 1))
        limit = _int(given.get("limit"), 0)
        return "read_file", canonical("read_file", {
            "path": _path(given.get("file_path"), root), "start": start,
            "end": start + limit - 1 if limit > 0 else 0}), "read"
    if tool == "Grep":
        glob = given.get("glob") or _path(given.get("path"), root)
        return "grep", canonical("grep", {"pattern": given.get("pattern"), "glob": glob}), "read"
    if tool == "Glob":
        return "list_files", canonical("list_files", {"glob": given.get("pattern")}), "read"
    if tool == "LS":
        folder = _path(given.get("path"), root).rstrip("/")
        return "list_files", canonical("list_files",
                                       {"glob": f"{folder}/*" if folder else ""}), "read"
    if tool in ("Bash", "shell", "local_shell", "exec_command"):
        command = given.get("command") if "command" in given else given.get("cmd")
        if isinstance(command, list):
            return shell_call([str(w) for w in command], root)
        return shell_call(_split(str(command or "")), root, str(command or ""))
    if tool in EDITS:
        return "edit", canonical("edit", given), "edit"
    return tool, dict(given), "other"


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def shell_call(words: list[str], root: str,
               text: str = "") -> tuple[str, dict[str, Any], str]:
    """A shell command (its words, and its text when it was given as one) in engram's
    terms: a read it is one of, a test, or a command."""
    if len(words) >= 3 and PurePosixPath(words[0]).name in SHELLS and words[1] in ("-c", "-lc"):
        text = words[2]
        words = _split(text)
    command = text.strip() or shlex.join(words)
    if is_test(command):
        return "run", canonical("run", {"command": command}), "test"
    read = _shell_read(words, root)
    if read is not None:
        return read[0], canonical(*read), "read"
    return "run", canonical("run", {"command": command}), "command"


def _shell_read(words: list[str], root: str) -> tuple[str, dict[str, Any]] | None:
    if not words or any(w in ("|", ">", ">>", "&&", ";", "||") for w in words):
        return None
    name, rest = PurePosixPath(words[0]).name, words[1:]
    files = [w for w in rest if not w.startswith("-")]
    if name == "cat" and len(files) == 1 and len(rest) == 1:
        return "read_file", {"path": _path(files[0], root)}
    if name == "sed" and len(rest) == 3 and rest[0] == "-n":
        found = re.fullmatch(r"(\d+),(\d+)p", rest[1])
        if found:
            return "read_file", {"path": _path(rest[2], root), "start": int(found[1]),
                                 "end": int(found[2])}
    if name == "head" and len(rest) == 3 and rest[0] == "-n" and rest[1].isdigit():
        return "read_file", {"path": _path(rest[2], root), "start": 1, "end": int(rest[1])}
    if (name == "rg" and "--files" in rest) or (name == "git" and rest[:1] == ["ls-files"]) \
            or (name in ("ls", "find") and len(files) <= 1):
        folder = _path(files[0], root).rstrip("/") if files and name != "git" else ""
        return "list_files", {"glob": f"{folder}/*" if folder and folder != "." else ""}
    if name in ("rg", "grep") and files:
        return "grep", {"pattern": files[0],
                        "glob": _path(files[1], root) if len(files) == 2 else ""}
    return None


def describe(call: RecordedCall) -> str:
    return f"{call.function}({json.dumps(call.args, sort_keys=True)})"
