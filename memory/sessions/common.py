"""What every reader of another tool's sessions shares: the ``Session`` it fills, the
calls it keeps, and the reading of a file line by line with each line's byte offsets
(what ``memory.ingest`` marks its place with)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.redact import redact, redact_obj

CONTEXT_CHARS = 2000  # a tool call or result kept as context, cut to this length
RESULT_CHARS = 20_000  # a tool result kept for an agentic replay (replay/agentic/)
ANSWER_CHARS = 20_000  # of the assistant's text of one turn


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
    """What a reader found: user turns, each with the context that followed it and the
    assistant's text; where each turn starts in the file (byte offset of its first line)
    and whether it is closed (a later turn began, or the tool marked its end)."""

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
    answers: list[list[str]] = field(default_factory=list)  # per query: the assistant's text
    starts: list[int] = field(default_factory=list)  # per query: byte offset of its line
    closed: list[bool] = field(default_factory=list)  # per query
    consumed: int = 0  # byte offset after the last line read
    at: int = 0  # byte offset of the line being read

    def ask(self, text: str, start: int | None = None) -> None:
        if self.closed:
            self.closed[-1] = True  # a new turn closes the one before
        self.queries.append(redact(text))
        self.context.append([])
        self.answers.append([])
        self.starts.append(self.at if start is None else start)
        self.closed.append(False)

    def close(self) -> None:
        """The tool marked the end of the current turn."""
        if self.closed:
            self.closed[-1] = True

    def say(self, text: str) -> None:
        """The assistant's text in the current turn (none before the first query)."""
        text = text.strip()
        if text and self.answers:
            self.answers[-1].append(redact(text))

    def answer(self, n: int) -> str:
        return "\n\n".join(self.answers[n])[:ANSWER_CHARS] if n < len(self.answers) else ""

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


def text_blocks(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, dict) and b.get("type") in kinds)
    return ""


def lines(path: Path, complete_only: bool = False) -> Iterator[tuple[int, int, str]]:
    """Each line of ``path`` as (start, end, text), byte offsets; with ``complete_only`` a
    last line without its newline (still being written) is left out. ``ForeignError``
    when a line is not UTF-8 text."""
    data = path.read_bytes()
    start = 0
    while start < len(data):
        newline = data.find(b"\n", start)
        if newline < 0:
            if complete_only:
                return
            end = len(data)
        else:
            end = newline + 1
        raw = data[start:end]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ForeignError(f"{path}: not a text file ({exc.reason})") from exc
        yield start, end, text.rstrip("\r\n")
        start = end


def dict_row(line: str) -> dict[str, Any] | None:
    """The JSON object a line holds, or None (it does not parse, or holds no object)."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    return row if isinstance(row, dict) else None


def head_rows(path: Path, count: int) -> list[dict[str, Any]] | None:
    """The JSON objects among the first ``count`` lines of ``path`` (a line that does not
    parse is passed over; None: the file cannot be read)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            lines = [line for _, line in zip(range(count), fh, strict=False)]
    except OSError:
        return None
    return [row for line in lines if (row := dict_row(line)) is not None]


def json_rows(path: Path, session: Session, complete_only: bool = False
              ) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, in order; ``session.at`` is each one's line start
    while the caller handles it and ``session.consumed`` moves past each line. A line that
    does not parse is skipped and counted; a file in which none does is ``ForeignError``."""
    found = 0
    for start, end, line in lines(path, complete_only):
        if line.strip():
            session.records += 1
            row = dict_row(line)
            if row is not None:
                found += 1
                session.at = start
                yield row
            else:
                session.skipped += 1
        session.consumed = end
    if session.records and not found:
        raise ForeignError(f"{path}: corrupt {session.tool} transcript: none of its "
                           f"{session.records} lines is a JSON record")
