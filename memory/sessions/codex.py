"""Codex CLI sessions (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, 0.4x-0.6x).

Lines ``{"timestamp", "type", "payload"}`` with ``session_meta`` (id, cwd, cli_version),
``response_item`` (message with input_text / output_text parts, function_call,
function_call_output, custom_tool_call(_output), local_shell_call, reasoning),
``event_msg`` and ``turn_context``; the older rollouts (before ``payload``) hold a first
meta line then bare response items. Injected ``<environment_context>`` and
``<user_instructions>`` messages are context, not turns. An ``event_msg`` of type
``task_complete`` (or ``turn_aborted``) ends the turn. Some rollouts log the user only
as events (``event_msg`` ``user_message``, the answers as ``agent_message``): their turns
are read from those, in order with the rest.
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


def _said(item: dict[str, Any], role: str) -> bool:
    """Whether a response item is a message of ``role`` with text (a user's: a turn)."""
    if item.get("type") != "message" or item.get("role") != role:
        return False
    text = text_blocks(item.get("content"), ("input_text", "output_text", "text")).strip()
    return bool(text) and not (role == "user" and text.startswith(INJECTED))


def read_codex(path: Path, complete_only: bool = False) -> Session:
    session = Session("codex", path.stem)
    rows = [(session.at, row) for row in json_rows(path, session, complete_only)]
    items = [r.get("payload") if "payload" in r else r for _, r in rows]
    items = [i for i in items if isinstance(i, dict)]
    # a rollout that logged the user only as events (``user_message``): its turns and,
    # when no assistant message item was logged, its answers (``agent_message``) are those
    by_events = not any(_said(i, "user") for i in items) and any(
        i.get("type") == "user_message" and str(i.get("message") or "").strip()
        for i in items)
    answers_by_events = by_events and not any(_said(i, "assistant") for i in items)
    for n, (at, row) in enumerate(rows):
        session.at = at
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
        event = payload.get("type") if kind == "event_msg" else None
        if kind == "session_meta":
            session.id = str(payload.get("id") or session.id)
            session.repo = str(payload.get("cwd") or session.repo)
            session.version = str(payload.get("cli_version") or session.version)
        elif kind == "response_item":
            if payload.get("type") in CODEX_ITEMS:
                _item(payload, session)
            else:
                session.skipped += 1
        elif event == "user_message" and by_events:
            if query := str(payload.get("message") or "").strip():
                session.ask(query)
        elif event == "agent_message" and answers_by_events:
            session.say(str(payload.get("message") or ""))
        elif event in TURN_ENDS:
            session.close()
    session.at = rows[-1][0] if rows else 0
    return session
