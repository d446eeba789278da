"""Aider chat histories (``.aider.chat.history.md``, aider's ``io.py``).

``# aider chat started at`` opens a session (a history holds every session started in
that repository: they are read as one conversation, in order), the developer's input is
written with ``#### `` before each line, tool output and confirmations as ``> ``
blockquotes, the model's reply as plain text. In-chat commands (``/add``, ``/run``...)
are context; ``/ask``, ``/code`` and ``/architect`` carry a question, which is the turn.
A turn ends when the next input or the next chat begins.
"""

from __future__ import annotations

import re
from pathlib import Path

from memory.sessions.common import ForeignError, Session, lines

AIDER_START = "# aider chat started at"
AIDER_ASKS = re.compile(r"^/(ask|code|architect)\s+", re.IGNORECASE)


def read_aider(path: Path, complete_only: bool = False) -> Session:
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise ForeignError(f"{path}: not a text file ({exc.reason})") from exc
    if AIDER_START not in text:
        raise ForeignError(f"{path}: corrupt aider chat history: no '{AIDER_START}' line")
    session = Session("aider", path.parent.name or path.stem, repo=str(path.parent))
    user: list[str] = []
    user_start = 0
    reply: list[str] = []

    def flush_reply() -> None:
        if reply:
            session.say("\n".join(reply))
            reply.clear()

    def flush_user() -> None:
        if not user:
            return
        text = "\n".join(user).strip()
        user.clear()
        session.records += 1
        if AIDER_ASKS.match(text):
            session.ask(AIDER_ASKS.sub("", text, count=1).strip(), user_start)
        elif text.startswith("/") or text == "<blank>":
            session.note(f"command: {text}")
        elif text:
            session.ask(text, user_start)

    fenced = False  # inside a code block of the model's reply: nothing is markup
    for start, end, line in lines(path, complete_only):
        session.consumed = end
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.lstrip().startswith("```"):
            reply.append(line)
            continue
        if line.startswith("####"):
            flush_reply()
            if not user:
                user_start = start
            user.append(line[4:].removeprefix(" ").rstrip())
            continue
        flush_user()
        if line.startswith(AIDER_START):
            flush_reply()
            session.close()
            session.records += 1
            session.version = session.version or line[len(AIDER_START):].strip()
        elif line.startswith("> ") or line.rstrip() == ">":
            session.note(line[1:].strip())
        elif line.strip():
            reply.append(line)
    flush_user()
    flush_reply()
    return session
