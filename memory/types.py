"""Plain data shared by every part of engram: turns, context packs, usage."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from memory import _checks as check
from memory._checks import RecordError

SectionKind = Literal["system", "instructions", "history", "memory", "repo", "task", "calls"]
Purpose = Literal["answer", "memory", "mock_user", "judge", "build"]
PURPOSES: tuple[str, ...] = ("answer", "memory", "mock_user", "judge", "build")


@dataclass
class Counts:
    """Token and cost counts of the LLM calls made for one purpose."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    calls: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Usage:
    """LLM usage split by purpose, so a backend's own overhead is counted."""

    by_purpose: dict[str, Counts] = field(default_factory=dict)

    def add(
        self, purpose: str, prompt_tokens: int, completion_tokens: int, cost: float = 0.0
    ) -> None:
        if purpose not in PURPOSES:
            raise ValueError(f"unknown usage purpose {purpose!r}; known: {', '.join(PURPOSES)}")
        counts = self.by_purpose.setdefault(purpose, Counts())
        counts.prompt_tokens += prompt_tokens
        counts.completion_tokens += completion_tokens
        counts.cost += cost
        counts.calls += 1

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.by_purpose.values())

    @property
    def cost(self) -> float:
        return sum(c.cost for c in self.by_purpose.values())

    def get(self, purpose: str) -> Counts:
        return self.by_purpose.get(purpose, Counts())

    def copy(self) -> Usage:
        return Usage({k: Counts(**asdict(v)) for k, v in self.by_purpose.items()})

    def since(self, earlier: Usage) -> Usage:
        """The usage accrued between ``earlier`` (a copy of this ledger) and now."""
        delta = Usage()
        for purpose, now in self.by_purpose.items():
            then = earlier.get(purpose)
            diff = Counts(
                now.prompt_tokens - then.prompt_tokens,
                now.completion_tokens - then.completion_tokens,
                now.cost - then.cost,
                now.calls - then.calls,
            )
            if diff.calls or diff.tokens:
                delta.by_purpose[purpose] = diff
        return delta

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {k: asdict(v) for k, v in self.by_purpose.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage:
        usage = cls()
        for purpose, counts in (data or {}).items():
            if isinstance(counts, dict):
                usage.by_purpose[purpose] = Counts(
                    int(counts.get("prompt_tokens", 0)),
                    int(counts.get("completion_tokens", 0)),
                    float(counts.get("cost", 0.0)),
                    int(counts.get("calls", 0)),
                )
        return usage


@dataclass
class Section:
    """One labelled piece of what the model saw.

    ``role`` is ``system`` for context blocks; history sections carry the
    ``user``/``assistant`` role of the message they stand for.
    """

    kind: SectionKind
    source: str
    text: str
    tokens: int = 0
    role: Literal["system", "user", "assistant"] = "system"
    pinned: bool = False  # put there by the developer's pin (memory/turn/steering.py)

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"kind": self.kind, "source": self.source,
                                   "tokens": self.tokens}
        if self.pinned:
            summary["pinned"] = True
        return summary


CALLS_TITLE = "Your function calls so far in this answer"
_CONTEXT_TITLES: dict[str, str] = {
    "instructions": ("Project instructions (the repository's own files, nearest to the code "
                     "concerned first: where two disagree, the nearer one wins)"),
    "memory": "Memories from earlier in this conversation",
    "repo": "Code from the repository",
    "task": "Task",
}


@dataclass
class ContextPack:
    """The ordered sections a backend chose for one query: what the model sees."""

    query: str
    sections: list[Section] = field(default_factory=list)
    query_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.query_tokens + sum(s.tokens for s in self.sections)

    def of_kind(self, kind: str) -> list[Section]:
        return [s for s in self.sections if s.kind == kind]

    def to_messages(self, note: str = "") -> list[dict[str, str]]:
        """Render as chat messages: one system message, past turns, the query. This
        answer's function calls (``calls`` sections) and ``note`` (a tool step's prompt)
        follow the query in its message, so that every request of a turn's tool loop
        begins with the same messages (a server's prompt cache reuses them)."""
        system_parts = [s.text for s in self.sections if s.kind == "system"]
        for kind, title in _CONTEXT_TITLES.items():
            blocks = [s.text for s in self.sections if s.kind == kind]
            if blocks:
                system_parts.append(f"## {title}\n\n" + "\n\n".join(blocks))
        messages: list[dict[str, str]] = []
        if system_parts:
            messages.append({"role": "system", "content": "\n\n".join(system_parts)})
        for section in self.sections:
            if section.kind == "history":
                messages.append({"role": section.role, "content": section.text})
        query = [self.query]
        calls = [s.text for s in self.sections if s.kind == "calls"]
        if calls:
            query.append(f"## {CALLS_TITLE}\n\n" + "\n\n".join(calls))
        if note:
            query.append(note)
        messages.append({"role": "user", "content": "\n\n".join(query)})
        return messages

    def summary(self) -> list[dict[str, Any]]:
        return [s.summary() for s in self.sections]


@dataclass
class Turn:
    """One exchange: the user's text, the answer, and what produced it."""

    index: int
    user: str
    assistant: str = ""
    backend: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    started: float = field(default_factory=time.time)
    finished: float = 0.0
    context: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # what a backend noted (e.g. conflicts)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": "turn",
            "index": self.index,
            "user": self.user,
            "assistant": self.assistant,
            "backend": self.backend,
            "model": self.model,
            "usage": self.usage.to_dict(),
            "latency_ms": self.latency_ms,
            "started": self.started,
            "finished": self.finished,
            "context": self.context,
        }
        if self.error is not None:
            record["error"] = self.error
        if self.meta:
            record["meta"] = self.meta
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Turn:
        """The turn a ``turn`` record holds; ``RecordError`` (a ValueError naming the
        field) when a field is missing or has the wrong type."""
        if not isinstance(record, dict):
            raise RecordError(f"a turn record must be an object, not {type(record).__name__}")
        return cls(
            index=check.integer(record, "index"),
            user=check.text(record, "user"),
            assistant=check.text(record, "assistant", ""),
            backend=check.text(record, "backend", ""),
            model=check.text(record, "model", ""),
            usage=_usage(check.obj(record, "usage")),
            latency_ms=check.integer(record, "latency_ms", 0, maximum=2**53),
            started=check.timestamp(record, "started", 0.0),
            finished=check.timestamp(record, "finished", 0.0),
            context=[_context_entry(c) for c in check.objects(record, "context")],
            error=check.optional_text(record, "error"),
            meta=_meta(check.obj(record, "meta")),
        )


def _usage(data: dict[str, Any]) -> Usage:
    usage = Usage()
    for purpose, counts in data.items():
        if not isinstance(counts, dict):
            raise RecordError(f"usage of {purpose[:40]!r} must be an object")
        usage.by_purpose[purpose] = Counts(
            check.integer(counts, "prompt_tokens", 0, maximum=2**53),
            check.integer(counts, "completion_tokens", 0, maximum=2**53),
            check.number(counts, "cost", 0.0),
            check.integer(counts, "calls", 0, maximum=2**53),
        )
    return usage


def _context_entry(entry: dict[str, Any]) -> dict[str, Any]:
    check.text(entry, "kind")
    check.text(entry, "source")
    check.integer(entry, "tokens", maximum=2**53)
    return entry


def _meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A turn's notes: an A/B comparison (both answers, the kept one) and per-backend
    notes (a list of conflicts)."""
    for key, value in meta.items():
        if key == "ab":
            if not isinstance(value, dict):
                raise RecordError("meta 'ab' must be an object")
            backends, answers = check.strings(value, "backends"), check.strings(value, "answers")
            choice = check.optional_integer(value, "choice")
            if len(backends) != len(answers) or (choice is not None and choice >= len(answers)):
                raise RecordError("meta 'ab': backends, answers and choice do not agree")
        elif isinstance(value, dict) and not isinstance(value.get("conflicts", []), list):
            raise RecordError(f"meta {key[:40]!r}: 'conflicts' must be a list")
    return meta
