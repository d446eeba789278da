"""Codex CLI sessions (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, 0.4x-0.6x).

Lines ``{"timestamp", "type", "payload"}`` with ``session_meta`` (id, cwd, cli_version),
``response_item`` (message with input_text / output_text parts, function_call,
function_call_output, custom_tool_call(_output), local_shell_call, reasoning),
``event_msg`` and ``turn_context``; the older rollouts (before ``payload``) hold a first
meta line then bare response items. Injected ``<environment_context>`` and
``<user_instructions>`` messages are context, not turns. An ``event_msg`` of type
``task_complete`` (or ``turn_aborted``) ends the turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory.sessions.common import Session, json_rows, text_blocks

CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
CODEX_ITEMS = {"message", "function_call", "function_call_output", "custom_tool_call",
               "custom_tool_call_output", "local_shell_call", "reasoning",
               "web_search_call"}
INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
TURN_ENDS = {"task_complete", "turn_aborted"}


def _item(item: dict[str, Any], session: Session) -> None:
    kind = item.get("type")
    if kind == "message":
        text = text_blocks(item.get("content"), ("input_text", "text")).strip()
        if item.get("role") == "user" and text:
            if text.startswith(INJECTED):
                session.note(text)
            else:
                session.ask(text)
        elif item.get("role") == "assistant":
            session.say(text_blocks(item.get("content"), ("output_text", "text")))
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
        text, ok = _output(output)
        session.result(str(item.get("call_id") or ""), text, ok)


def _json_or_text(given: Any) -> Any:
    if isinstance(given, str):
        try:
            return json.loads(given)
        except json.JSONDecodeError:
            return given
    return given


def _output(output: Any) -> tuple[str, bool]:
    """A function call's output text and whether it worked: the newer rollouts wrap it
    as ``{"output": ..., "metadata": {"exit_code": ...}}`` (a JSON string)."""
    found = _json_or_text(output)
    if isinstance(found, dict) and "output" in found:
        code = (found.get("metadata") or {}).get("exit_code") \
            if isinstance(found.get("metadata"), dict) else None
        return str(found["output"]), code in (None, 0)
    return str(output if output is not None else ""), True


def read_codex(path: Path, complete_only: bool = False) -> Session:
    session = Session("codex", path.stem)
    event_queries: list[tuple[int, str]] = []
    for n, row in enumerate(json_rows(path, session, complete_only)):
        if "payload" not in row:  # the older rollouts: a meta line, then bare items
            if n == 0 and "id" in row and "type" not in row:
                session.id = str(row["id"])
            elif row.get("type") in CODEX_ITEMS:
                _item(row, session)
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
                _item(payload, session)
            else:
                session.skipped += 1
        elif kind == "event_msg" and payload.get("type") == "user_message":
            event_queries.append((session.at, str(payload.get("message") or "")))
        elif kind == "event_msg" and payload.get("type") in TURN_ENDS:
            session.close()
    if not session.queries and any(q.strip() for _, q in event_queries):
        for start, query in event_queries:  # a rollout that logged the user only as events
            if query.strip():
                session.ask(query.strip(), start)
    return session
