"""The sessions developers already have, as recorded sources: Claude Code, Codex CLI, Aider.

The readers live in ``memory/sessions/`` (one module per tool), shared with ``engram memory
ingest``; this module names them for replay (``replay.sessions.source`` and
``replay.agentic``): the developer's own messages become the user turns to re-drive, tool
calls and results are kept beside the turn they followed, as that turn's context.
"""

from __future__ import annotations

from memory.sessions import (
    CONTEXT_CHARS,
    ENGRAM_TYPES,
    READERS,
    RESULT_CHARS,
    ForeignCall,
    ForeignError,
    Session,
    read_aider,
    read_claude,
    read_codex,
    read_foreign,
    sniff,
)

__all__ = ["CONTEXT_CHARS", "ENGRAM_TYPES", "READERS", "RESULT_CHARS", "ForeignCall",
           "ForeignError", "Session", "read_aider", "read_claude", "read_codex",
           "read_foreign", "sniff"]
