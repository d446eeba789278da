"""The sessions developers already have in other tools, read into one shape (``Session``):
Claude Code (``claude``), Codex CLI (``codex``), Aider (``aider``); ``places`` finds a
repository's sessions where each tool keeps them.

Each reader maps a foreign transcript to the developer's own messages (the user turns)
with, per turn, the context that followed it (tool calls and results, slash commands,
confirmations, meta records) and the assistant's text. A record that does not parse or
is of a kind the reader does not know is skipped and counted, never fatal; a file in
which no record parses is refused with a clear error (``ForeignError``). Secrets are
redacted as they are read (``memory/redact.py``). Readers take ``complete_only``: a last
line still being written is left out (``memory.ingest`` takes it on its next run).

Replay re-drives these sessions (``replay/sessions``, ``replay/agentic``); ``engram memory
ingest`` feeds them to a memory backend (``memory/ingest``). Formats, as checked (public
documentation, public example files, the tools' sources), are in each reader's module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memory.sessions.aider import AIDER_START, read_aider
from memory.sessions.claude import CLAUDE_TYPES, read_claude
from memory.sessions.codex import CODEX_TYPES, read_codex
from memory.sessions.common import (
    CONTEXT_CHARS,
    RESULT_CHARS,
    ForeignCall,
    ForeignError,
    Session,
    head_rows,
)

ENGRAM_TYPES = {"session", "turn", "switch", "memory", "ab"}  # memory.records
READERS: dict[str, Callable[..., Session]] = {
    "claude-code": read_claude, "codex": read_codex, "aider": read_aider}


def sniff(path: Path) -> str | None:
    """Which tool wrote ``path`` (None: not a foreign transcript these readers read)."""
    if path.suffix == ".md":
        try:
            head = path.read_text("utf-8", errors="replace")[:4000]
        except OSError:
            return None
        return "aider" if AIDER_START in head or path.name.startswith(".aider.chat") else None
    if path.suffix != ".jsonl":
        return None
    for row in head_rows(path, 50) or []:
        if row.get("type") in ENGRAM_TYPES or "prompt" in row:
            return None  # engram's own transcript, or a CodeIF-Bench task file
        if row.get("type") in CODEX_TYPES and "payload" in row:
            return "codex"
        if "sessionId" in row and row.get("type") in CLAUDE_TYPES:
            return "claude-code"
        if path.name.startswith("rollout-") and ("id" in row or "type" in row):
            return "codex"
    return None


def read_foreign(path: Path, tool: str) -> Session:
    """The whole session at ``path`` as ``tool`` wrote it; ``ForeignError`` when it holds no
    user turn."""
    session = READERS[tool](path)
    if not session.queries:
        raise ForeignError(f"{path}: no user turn found in this {tool} transcript "
                           f"({session.records} records, {session.skipped} skipped)")
    return session


__all__ = ["CONTEXT_CHARS", "ENGRAM_TYPES", "READERS", "RESULT_CHARS", "ForeignCall",
           "ForeignError", "Session", "read_aider", "read_claude", "read_codex",
           "read_foreign", "sniff"]
