"""Claude Code sessions (``~/.claude/projects/<project>/<session>.jsonl``, CLI 1.0.x-2.1.x).

One JSON object per line; ``type`` user / assistant / summary / system /
file-history-snapshot / queue-operation / progress; ``message.content`` a string or a
list of blocks (text, tool_use, tool_result, thinking, image); ``isMeta`` and
``isSidechain`` (sub-agent) records are not the developer's turns, nor are a compaction's
summary (``isCompactSummary``) and the note of an interruption ("[Request interrupted by
user...]"); ``cwd`` names the project. An assistant message of the developer's (not a
sub-agent's) whose ``stop_reason`` is ``end_turn`` ends the turn; ``tool_use`` does not
(the tool's result and more of the answer follow). Without an ``end_turn`` (a reply cut
off), the turn closes when the next one begins or the file settles (``memory.ingest``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from memory.sessions.common import Session, json_rows, text_blocks

CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot",
                "queue-operation", "progress"}
INTERRUPTED = "[Request interrupted by user"  # Claude Code's note when Esc stops a reply
COMMAND = re.compile(r"^\s*<(command-name|command-message|local-command-stdout|"
                     r"local-command-stderr)>")


def _tool_blocks(content: Any, session: Session) -> None:
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            session.note(f"tool call {block.get('name')}: "
                         f"{json.dumps(block.get('input'), sort_keys=True)}")
            session.call(str(block.get("name")), block.get("input"), str(block.get("id") or ""))
        elif block.get("type") == "tool_result":
            result = block.get("content")
            text = text_blocks(result, ("text",)) if not isinstance(result, str) else result
            session.note("tool result: " + text)
            session.result(str(block.get("tool_use_id") or ""), text,
                           not block.get("is_error"))


def read_claude(path: Path, complete_only: bool = False) -> Session:
    session = Session("claude-code", path.stem)
    for row in json_rows(path, session, complete_only):
        kind, message = row.get("type"), row.get("message")
        if kind not in CLAUDE_TYPES:
            session.skipped += 1
            continue
        session.repo = session.repo or str(row.get("cwd") or "")
        session.version = session.version or str(row.get("version") or "")
        session.id = str(row.get("sessionId") or session.id)
        if kind not in ("user", "assistant"):
            continue
        if not isinstance(message, dict) or "content" not in message:
            session.skipped += 1
            continue
        content = message["content"]
        _tool_blocks(content, session)
        if kind == "assistant":
            if not row.get("isSidechain"):
                session.say(text_blocks(content, ("text",)))
                if message.get("stop_reason") == "end_turn":
                    session.close()
            continue
        text = text_blocks(content, ("text",)).strip()
        if not text:
            continue  # a tool result only
        if row.get("isMeta") or row.get("isSidechain") or row.get("isCompactSummary") \
                or COMMAND.match(text) or text.startswith(INTERRUPTED):
            session.note(text)  # not a question: the turn it interrupts goes on
        else:
            session.ask(text)
    return session
