"""Plain data shared by every part of engram: turns, context packs, usage."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

SectionKind = Literal["system", "history", "memory", "repo", "task"]
Purpose = Literal["answer", "memory", "mock_user", "judge"]
PURPOSES: tuple[str, ...] = ("answer", "memory", "mock_user", "judge")


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
    pinned: bool = False  # put there by the developer's pin (memory/steering.py)

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"kind": self.kind, "source": self.source,
                                   "tokens": self.tokens}
        if self.pinned:
            summary["pinned"] = True
        return summary


_CONTEXT_TITLES: dict[str, str] = {
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

    def to_messages(self) -> list[dict[str, str]]:
        """Render as chat messages: one system message, past turns, the query."""
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
        messages.append({"role": "user", "content": self.query})
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
        return cls(
            index=int(record.get("index", 0)),
            user=str(record.get("user", "")),
            assistant=str(record.get("assistant", "")),
            backend=str(record.get("backend", "")),
            model=str(record.get("model", "")),
            usage=Usage.from_dict(record.get("usage")),
            latency_ms=int(record.get("latency_ms", 0)),
            started=float(record.get("started", 0.0)),
            finished=float(record.get("finished", 0.0)),
            context=list(record.get("context") or []),
            error=record.get("error"),
            meta=dict(record.get("meta") or {}),
        )
