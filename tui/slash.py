"""Slash commands: the list, parsing and help text (no Textual imports)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str
    args: str
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("backend", "NAME", "switch the memory backend; the conversation stays"),
    SlashCommand("ab", "A B", "answer the next query with two backends side by side"),
    SlashCommand("model", "NAME",
                 "switch the model (a litellm model string or an alias from the config)"),
    SlashCommand("compact", "[GUIDANCE]",
                 "summarise the older turns now (compact backend), following GUIDANCE"),
    SlashCommand("remember", "",
                 "keep a summary of this session for later ones (cards backend)"),
    SlashCommand("experience", "[SESSION]",
                 "show an earlier session's summary in every answer (cards backend)"),
    SlashCommand("undo", "", "revert the last edit engram applied (its commit)"),
    SlashCommand("autoapply", "[on|off]",
                 "apply an answer's edit without asking (off: a diff first, y or n)"),
    SlashCommand("theme", "NAME", "switch the theme (engram-dark, engram-light)"),
    SlashCommand("inspector", "", "show or hide the context inspector"),
    SlashCommand("sessions", "", "pick a recorded session to resume"),
    SlashCommand("export", "[PATH]", "write the conversation as Markdown"),
    SlashCommand("help", "", "keys and commands"),
    SlashCommand("quit", "", "leave engram"),
)


FREE_TEXT = frozenset({"compact"})  # commands whose argument is the rest of the line, as typed


class SlashError(ValueError):
    """A slash command that cannot run as typed."""


def parse(text: str) -> tuple[str, list[str]] | None:
    """``("backend", ["rag"])`` for ``/backend rag``; None if ``text`` is not a command."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].strip().partition(" ")
    if head.lower() in FREE_TEXT:
        return head.lower(), [rest.strip()] if rest.strip() else []
    try:
        words = shlex.split(text[1:])
    except ValueError as exc:
        raise SlashError(f"cannot read the command: {exc}") from exc
    if not words:
        raise SlashError("empty command; /help lists them")
    name = words[0].lower()
    if name not in {c.name for c in COMMANDS}:
        raise SlashError(f"unknown command /{name}; /help lists them")
    return name, words[1:]


def help_text() -> str:
    return "\n".join(f"/{c.name} {c.args}".ljust(20) + c.help for c in COMMANDS)
