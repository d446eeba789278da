"""``run``: a command (or the project's tests) run for the model, only with the
developer's consent and only in the jail.

The command is split like a shell line (``shlex``) but no shell runs it: a pipe or a
redirection needs ``sh -c '...'``. ``tests`` runs the project's test command. The
``ConsentPolicy`` is asked first; then the ``Jail`` runs it on a copy of the working
tree, with a timeout, without network, without the developer's home, and writes
nothing back. Without a working jail nothing runs. The output's tails reach the model;
the exit status, the consent and the jail are in the call's record.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from memory._checks import control_character
from memory.acting.toolloop import Tool, ToolResult
from memory.acting.tools.consent import ConsentPolicy

TESTS = "tests"
TEST_COMMAND = ("python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider")
TAIL_CHARS = 5_000  # of stdout and of stderr shown to the model
MAX_COMMAND = 1_000


@dataclass(frozen=True)
class Limits:
    timeout: float = 120.0  # wall clock, seconds
    memory_bytes: int = 4 * 1024**3  # address space, per process
    file_bytes: int = 256 * 1024**2  # largest file a command may write
    processes: int = 256  # tasks inside the jail
    copy_bytes: int = 512 * 1024**2  # largest working tree copied into the jail


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float
    sandbox: str = "bwrap"

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


class Jail(Protocol):
    """Runs a command on a copy of a working tree, isolated (memory/acting/jail/)."""

    def available(self) -> str | None:
        """None when it works here, else why not."""
        ...

    def run(self, root: Path, argv: list[str], limits: Limits) -> CommandResult:
        ...


TOOL = Tool("run", "run a command in a sandboxed copy of the repository (no network, "
            "nothing written back, a timeout), after the developer allows it; 'tests' runs "
            "the project's tests. No shell: use sh -c '...' for pipes.",
            {"command": {"type": "string", "minLength": 1, "maxLength": MAX_COMMAND}})


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The end of ``text`` within ``limit`` characters. A pytest short summary longer than
    that (forty failures on a wide terminal, or untruncated under ``CI=1``) has its
    messages shortened first, then their continuation lines left out, so every failed
    test's id stays in view."""
    if len(text) <= limit:
        return text
    head = _SUMMARY_HEAD.search(text)
    if head is not None and len(text) - head.start() > limit:
        lines = text[head.start():].split("\n")
        text = text[:head.start()] + "\n".join(_shorter(line) for line in lines)
        if len(text) <= limit:
            return text
        text = text[:head.start()] + _ids_only(text[head.start():])
        if len(text) <= limit:
            return text
    return f"[... {len(text) - limit} characters before]\n" + text[-limit:]


_SUMMARY_HEAD = re.compile(r"^=+ short test summary info =+$", re.M)
_SUMMARY_LINE = re.compile(r"^((?:FAILED|ERROR) \S+ - )(.*)$")
_SUMMARY_KEPT = re.compile(r"^(?:FAILED|ERROR|=+ )")
SUMMARY_MESSAGE_CHARS = 60


def _shorter(line: str) -> str:
    match = _SUMMARY_LINE.match(line)
    if match is None or len(match.group(2)) <= SUMMARY_MESSAGE_CHARS:
        return line
    return match.group(1) + match.group(2)[:SUMMARY_MESSAGE_CHARS] + "..."


def _ids_only(summary: str) -> str:
    """The summary's header, ``FAILED``/``ERROR`` lines and last line (the counts); the
    lines that continue a message are counted, not kept."""
    lines = summary.rstrip("\n").split("\n")
    kept = [line for line in lines[:-1] if _SUMMARY_KEPT.match(line)] + lines[-1:]
    left = sum(1 for line in lines if line.strip()) - sum(1 for line in kept if line.strip())
    if left:
        kept.insert(1, f"[{left} lines continuing these messages left out]")
    return "\n".join(kept)


def render(result: CommandResult) -> str:
    if result.timed_out:
        status = f"timed out after {result.seconds:.1f} s (killed)"
    else:
        status = f"exit {result.returncode} in {result.seconds:.1f} s"
    parts = [f"$ {shlex.join(result.argv)}\n{status} (in the jail, on a copy of the "
             "working tree: nothing was written back)"]
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text.strip():
            parts.append(f"--- {name} ---\n{tail(text.rstrip())}")
    return "\n".join(parts)


@dataclass
class RunTool:
    root: Path
    consent: ConsentPolicy
    jail: Jail
    limits: Limits = field(default_factory=Limits)
    test_command: tuple[str, ...] = TEST_COMMAND
    results: list[CommandResult] = field(default_factory=list)  # what ran, in order

    def argv(self, command: str) -> list[str]:
        """The command's words; ``ValueError`` saying why it cannot be run."""
        if control_character(command.replace("\t", " ")):
            raise ValueError("the command holds a control character")
        if command.strip() == TESTS:
            return list(self.test_command)
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"the command cannot be split into words: {exc}") from exc
        if not words:
            raise ValueError("the command is empty")
        return words

    async def __call__(self, command: str) -> ToolResult:
        try:
            argv = self.argv(command)
        except ValueError as exc:
            return ToolResult(f"Not run: {exc}.", ok=False)
        shown = shlex.join(argv)
        why = self.jail.available()
        if why is not None:
            return ToolResult(f"Not run: commands run only in the sandbox, which does not "
                              f"work here ({why}).", ok=False, meta={"consent": "not-asked"})
        consent = await self.consent.check(shown)
        if not consent.allowed:
            return ToolResult(f"Not run: {consent.message}", ok=False,
                              meta={"consent": consent.how})
        try:
            result = await asyncio.to_thread(self.jail.run, self.root, argv, self.limits)
        except (OSError, ValueError) as exc:
            return ToolResult(f"Not run: {exc}", ok=False, meta={"consent": consent.how})
        self.results.append(result)
        # the call's seconds are the command's own: not the time the developer took to allow it
        return ToolResult(render(result), ok=result.ok,
                          meta={"consent": consent.how, "returncode": result.returncode,
                                "timed_out": result.timed_out, "sandbox": result.sandbox,
                                "seconds": round(result.seconds, 3)})
