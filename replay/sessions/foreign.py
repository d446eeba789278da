"""The sessions developers already have, as recorded sources: Claude Code, Codex CLI, Aider.

Each reader maps a foreign transcript to engram's ``Recorded`` source: the developer's
own messages become the user turns to re-drive; tool calls and tool results (and slash
commands, confirmations, meta records) are not user turns — they are kept beside the
turn they followed, as that turn's context. A record that does not parse or is of a
kind the reader does not know is skipped and counted, never fatal; a file in which no
record parses, or that holds no user turn, is refused with a clear error.

Formats, as checked (public documentation, public example files, the tools' sources):
- Claude Code (``~/.claude/projects/<project>/<session>.jsonl``, CLI 1.0.x-2.1.x): one
  JSON object per line; ``type`` user / assistant / summary / system /
  file-history-snapshot / queue-operation; ``message.content`` a string or a list of
  blocks (text, tool_use, tool_result, thinking, image); ``isMeta`` and
  ``isSidechain`` (sub-agent) records are not the developer's turns; ``cwd`` names
  the project.
- Codex CLI (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, 0.4x-0.6x): lines
  ``{"timestamp", "type", "payload"}`` with ``session_meta`` (id, cwd, cli_version),
  ``response_item`` (message with input_text / output_text parts, function_call,
  function_call_output, custom_tool_call(_output), local_shell_call, reasoning),
  ``event_msg`` and ``turn_context``; the older rollouts (before ``payload``) hold a
  first meta line then bare response items. Injected ``<environment_context>`` and
  ``<user_instructions>`` messages are context, not turns.
- Aider (``.aider.chat.history.md``, aider's ``io.py``): ``# aider chat started at``
  opens a session (a history holds every session started in that repository: they are
  read as one conversation, in order), the developer's input is written with ``#### ``
  before each line, tool output and confirmations as ``> `` blockquotes, the model's
  reply as plain text.
  In-chat commands (``/add``, ``/run``...) are context; ``/ask``, ``/code`` and
  ``/architect`` carry a question, which is the turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.redact import redact, redact_obj

CONTEXT_CHARS = 2000  # a tool call or result kept as context, cut to this length
RESULT_CHARS = 20_000  # a tool result kept for an agentic replay (replay/agentic/)


class ForeignError(ValueError):
    """A foreign transcript that cannot be read at all."""


@dataclass
class ForeignCall:
    """One tool call as the tool recorded it, with its result when one was recorded
    (``result`` None: none was); ``query`` is the index of the user turn it followed
    (-1: before the first). Read by agentic replays (``replay.agentic``)."""

    query: int
    tool: str
    input: Any
    id: str = ""
    result: str | None = None
    ok: bool = True


@dataclass
class Session:
    """What a reader found: user turns, each with the context that followed it."""

    tool: str
    id: str
    repo: str = ""
    version: str = ""
    queries: list[str] = field(default_factory=list)
    context: list[list[str]] = field(default_factory=list)  # per query
    preamble: list[str] = field(default_factory=list)  # context before the first query
    skipped: int = 0  # malformed or unknown records
    records: int = 0
    calls: list[ForeignCall] = field(default_factory=list)  # tool calls, in order

    def ask(self, text: str) -> None:
        self.queries.append(text)
        self.context.append([])

    def note(self, text: str) -> None:
        text = redact(text.strip())[:CONTEXT_CHARS]
        if text:
            (self.context[-1] if self.context else self.preamble).append(text)

    def call(self, tool: str, given: Any, call_id: str = "") -> None:
        self.calls.append(ForeignCall(len(self.queries) - 1, str(tool), redact_obj(given),
                                      str(call_id or "")))

    def result(self, call_id: str, text: str, ok: bool = True) -> None:
        """The result of the latest call with ``call_id`` (none: the latest call still
        waiting for one, when ``call_id`` is empty)."""
        for found in reversed(self.calls):
            if found.result is None and (found.id == call_id or not call_id):
                found.result, found.ok = redact(text)[:RESULT_CHARS], ok
                return


def _text_blocks(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, dict) and b.get("type") in kinds)
    return ""


def _json_lines(path: Path, session: Session) -> list[dict[str, Any]]:
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise ForeignError(f"{path}: not a text file ({exc.reason})") from exc
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        session.records += 1
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            session.skipped += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            session.skipped += 1
    if session.records and not rows:
        raise ForeignError(f"{path}: corrupt {session.tool} transcript: none of its "
                           f"{session.records} lines is a JSON record")
    return rows


# -- Claude Code -----------------------------------------------------------------------------
CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot",
                "queue-operation", "progress"}
COMMAND = re.compile(r"^\s*<(command-name|command-message|local-command-stdout|"
                     r"local-command-stderr)>")


def _claude_tool_blocks(content: Any, session: Session) -> None:
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            session.note(f"tool call {block.get('name')}: "
                         f"{json.dumps(block.get('input'), sort_keys=True)}")
            session.call(str(block.get("name")), block.get("input"), str(block.get("id") or ""))
        elif block.get("type") == "tool_result":
            result = block.get("content")
            text = _text_blocks(result, ("text",)) if not isinstance(result, str) else result
            session.note("tool result: " + text)
            session.result(str(block.get("tool_use_id") or ""), text,
                           not block.get("is_error"))


def read_claude(path: Path) -> Session:
    session = Session("claude-code", path.stem)
    for row in _json_lines(path, session):
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
        _claude_tool_blocks(content, session)
        if kind == "assistant":
            continue
        text = _text_blocks(content, ("text",)).strip()
        if not text:
            continue  # a tool result only
        if row.get("isMeta") or row.get("isSidechain") or COMMAND.match(text):
            session.note(text)
        else:
            session.ask(text)
    return session


# -- Codex CLI ---------------------------------------------------------------------------------
CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
CODEX_ITEMS = {"message", "function_call", "function_call_output", "custom_tool_call",
               "custom_tool_call_output", "local_shell_call", "reasoning",
               "web_search_call"}
INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def _codex_item(item: dict[str, Any], session: Session) -> None:
    kind = item.get("type")
    if kind == "message":
        text = _text_blocks(item.get("content"), ("input_text", "text")).strip()
        if item.get("role") == "user" and text:
            if text.startswith(INJECTED):
                session.note(text)
            else:
                session.ask(text)
    elif kind in ("function_call", "custom_tool_call"):
        given = item.get("arguments") or item.get("input") or ""
        session.note(f"tool call {item.get('name')}: {given}")
        session.call(str(item.get("name")), _json_or_text(given), str(item.get("call_id") or ""))
    elif kind == "local_shell_call":
        session.note(f"tool call shell: {json.dumps(item.get('action'), sort_keys=True)}")
        session.call("shell", item.get("action"), str(item.get("call_id") or ""))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, dict):
            output = output.get("content") or json.dumps(output, sort_keys=True)
        session.note(f"tool result: {output}")
        text, ok = _codex_output(output)
        session.result(str(item.get("call_id") or ""), text, ok)


def _json_or_text(given: Any) -> Any:
    if isinstance(given, str):
        try:
            return json.loads(given)
        except json.JSONDecodeError:
            return given
    return given


def _codex_output(output: Any) -> tuple[str, bool]:
    """A function call's output text and whether it worked: the newer rollouts wrap it
    as ``{"output": ..., "metadata": {"exit_code": ...}}`` (a JSON string)."""
    found = _json_or_text(output)
    if isinstance(found, dict) and "output" in found:
        code = (found.get("metadata") or {}).get("exit_code") \
            if isinstance(found.get("metadata"), dict) else None
        return str(found["output"]), code in (None, 0)
    return str(output if output is not None else ""), True


def read_codex(path: Path) -> Session:
    session = Session("codex", path.stem)
    event_queries: list[str] = []
    for n, row in enumerate(_json_lines(path, session)):
        if "payload" not in row:  # the older rollouts: a meta line, then bare items
            if n == 0 and "id" in row and "type" not in row:
                session.id = str(row["id"])
            elif row.get("type") in CODEX_ITEMS:
                _codex_item(row, session)
            else:
                session.skipped += 1
            continue
        kind, payload = row.get("type"), row.get("payload")
        if kind not in CODEX_TYPES or not isinstance(payload, dict):
            session.skipped += 1
            continue
        if kind == "session_meta":
            session.id = str(payload.get("id") or session.id)
            session.repo = str(payload.get("cwd") or session.repo)
            session.version = str(payload.get("cli_version") or session.version)
        elif kind == "response_item":
            if payload.get("type") in CODEX_ITEMS:
                _codex_item(payload, session)
            else:
                session.skipped += 1
        elif kind == "event_msg" and payload.get("type") == "user_message":
            event_queries.append(str(payload.get("message") or ""))
    if not session.queries and any(q.strip() for q in event_queries):
        for query in event_queries:  # a rollout that logged the user only as events
            if query.strip():
                session.ask(query.strip())
    return session


# -- Aider -------------------------------------------------------------------------------------
AIDER_START = "# aider chat started at"
AIDER_ASKS = re.compile(r"^/(ask|code|architect)\s+", re.IGNORECASE)


def read_aider(path: Path) -> Session:
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise ForeignError(f"{path}: not a text file ({exc.reason})") from exc
    if AIDER_START not in text:
        raise ForeignError(f"{path}: corrupt aider chat history: no '{AIDER_START}' line")
    session = Session("aider", path.parent.name or path.stem, repo=str(path.parent))
    user: list[str] = []
    reply: list[str] = []

    def flush_user() -> None:
        if not user:
            return
        text = "\n".join(user).strip()
        user.clear()
        session.records += 1
        if AIDER_ASKS.match(text):
            session.ask(AIDER_ASKS.sub("", text, count=1).strip())
        elif text.startswith("/") or text == "<blank>":
            session.note(f"command: {text}")
        elif text:
            session.ask(text)

    fenced = False  # inside a code block of the model's reply: nothing is markup
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.lstrip().startswith("```"):
            reply.append(line)
            continue
        if line.startswith("####"):
            if reply:
                reply.clear()
            user.append(line[4:].removeprefix(" ").rstrip())
            continue
        flush_user()
        if line.startswith(AIDER_START):
            session.records += 1
            session.version = session.version or line[len(AIDER_START):].strip()
        elif line.startswith("> ") or line.rstrip() == ">":
            session.note(line[1:].strip())
        elif line.strip():
            reply.append(line)
    flush_user()
    return session


ENGRAM_TYPES = {"session", "turn", "switch", "memory", "ab"}  # memory.records
READERS = {"claude-code": read_claude, "codex": read_codex, "aider": read_aider}


def sniff(path: Path) -> str | None:
    """Which tool wrote ``path`` (None: not a foreign transcript this module reads)."""
    if path.suffix == ".md":
        try:
            head = path.read_text("utf-8", errors="replace")[:4000]
        except OSError:
            return None
        return "aider" if AIDER_START in head or path.name.startswith(".aider.chat") else None
    if path.suffix != ".jsonl":
        return None
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            lines = [line for _, line in zip(range(50), fh, strict=False)]
    except OSError:
        return None
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(row, dict):
            continue
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
    session = READERS[tool](path)
    if not session.queries:
        raise ForeignError(f"{path}: no user turn found in this {tool} transcript "
                           f"({session.records} records, {session.skipped} skipped)")
    return session
