"""What a turn's tool calls and its edit look like in the chat, as plain lines (no
Textual): one compact line per call (tool, arguments, how it went), from the calls the
tool loop noted in ``turn.meta["tools"]``, and the edit's outcome."""

from __future__ import annotations

import json
from typing import Any

ARGS_CHARS = 70  # of a call's arguments shown on its line
CONSENT = {"denied": "denied by you", "no-asker": "not allowed (no one to ask)",
           "asker-failed": "not run (asking failed)", "not-asked": "no sandbox here",
           "asked-once": "allowed once", "asked-session": "allowed for the session",
           "session": "allowed for the session", "preallowed": "allowed in advance"}


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value if value and " " not in value and len(value) < 40 else json.dumps(value)
    return json.dumps(value)


def call_args(args: dict[str, Any]) -> str:
    """``path=app/db.py start=1`` (empty or default values left out), clipped."""
    shown = " ".join(f"{k}={_value(v)}" for k, v in args.items() if v not in ("", 0, None))
    return shown if len(shown) <= ARGS_CHARS else shown[:ARGS_CHARS - 1] + "…"


def call_line(call: dict[str, Any]) -> str:
    """One call: ``⚙ run command="pytest -q" · allowed once · exit 1 · 2.3 s``."""
    parts = [f"⚙ {call.get('function', '?')} {call_args(dict(call.get('args') or {}))}".rstrip()]
    consent = call.get("consent")
    if consent:
        parts.append(CONSENT.get(str(consent), str(consent)))
    if call.get("timed_out"):
        parts.append("timed out")
    elif "returncode" in call:
        parts.append(f"exit {call['returncode']}")
    parts.append("ok" if call.get("ok") else "failed")
    seconds = call.get("seconds")
    if isinstance(seconds, int | float) and seconds >= 0.1:
        parts.append(f"{seconds:.1f} s")
    return " · ".join(parts)


def tool_lines(meta: dict[str, Any]) -> list[str]:
    """A line per call of the turn's tool loop, then what ended it early or what the
    model stopped seeing (``meta`` is the turn's ``meta``)."""
    tools = meta.get("tools")
    if not isinstance(tools, dict):
        return []
    lines = [call_line(c) for c in tools.get("calls", []) if isinstance(c, dict)]
    if tools.get("error"):
        lines.append(f"⚠ tool loop: {tools['error']}")
    if tools.get("stopped"):
        lines.append(f"⚠ tool loop stopped: {tools['stopped']}")
    dropped = tools.get("dropped") or []
    if dropped:
        lines.append(f"⚠ {len(dropped)} tool output(s) masked, summarised or dropped to fit "
                     "the window (F2 shows the context)")
    return lines

