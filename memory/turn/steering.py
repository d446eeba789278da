"""Steering the memory: the developer pins context items, forgets or edits memories.

Two halves. Forgetting and editing are the backend's business, through a small
optional protocol (``memory_items``, ``forget``, ``edit``); a backend that lacks a method,
or raises ``SteeringUnsupported`` from it, cannot do that and says why. Pins are the
Agent's: a pinned item (a memory, a repository section, a past turn) is put into every
context the Agent builds, whatever the backend chose, within the budget.

Every operation is a ``memory`` transcript record with ``by: "user"``:
``op`` pin | unpin | forget | edit, ``id`` (the section source or memory id), ``kind``
(pins), ``text`` (the pinned text, the forgotten text, the new text of an edit), ``old``
(edits) and ``after`` (how many turns the session had when it was done). Replaying a
session folds them back in that order (``Steering.restore``, ``replay_op``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory.types import ContextPack, Section, Turn

log = logging.getLogger(__name__)

USER_OPS = ("pin", "unpin", "forget", "edit")
# when the budget is short, unpinned sections go in this order (the last of a kind first)
DROP_ORDER = ("repo", "memory", "history", "task")
# a history section is a chat message of its own: its chat template's role header and end
# mark cost tokens its text's count leaves out (ChatML in SmolLM2's tokenizer: 5.5 per
# message, measured on a user turn and an empty answer); a context of many short turns
# passed the window by them (LoCoMo's ~55 two-message turns in 4,096 tokens: 600 over)
MESSAGE_TOKENS = 6


def cost(section: Section) -> int:
    """What ``section`` takes of the window: its text, and a history message's template."""
    return section.tokens + (MESSAGE_TOKENS if section.kind == "history" else 0)


class SteeringUnsupported(Exception):
    """The backend cannot do this operation (the message says why)."""


class SteeringError(ValueError):
    """The operation cannot be done as asked (no such memory, empty text)."""


@dataclass(frozen=True)
class MemoryItem:
    """One discrete memory a backend holds, as the developer sees it."""

    id: str
    text: str
    editable: bool = True


@runtime_checkable
class Steerable(Protocol):
    """What a backend with discrete memories offers. Each method is optional: a backend
    may offer ``memory_items`` and ``forget`` only, or raise ``SteeringUnsupported``."""

    def memory_items(self) -> list[MemoryItem]:
        """Every memory held now, oldest first."""
        ...

    async def forget(self, memory_id: str) -> str:
        """Delete a memory; returns its text. KeyError if there is none."""
        ...

    async def edit(self, memory_id: str, text: str) -> str:
        """Replace a memory's text; returns the old text. KeyError if there is none."""
        ...


def memories_of(backend: Any) -> list[MemoryItem] | None:
    """The backend's memories, or None if it keeps none it can list."""
    listing = getattr(backend, "memory_items", None)
    if not callable(listing):
        return None
    return list(listing())


def unsupported(backend: Any, op: str) -> str | None:
    """Why ``backend`` cannot ``op`` (forget, edit) at all, or None if it has the method."""
    if callable(getattr(backend, op, None)):
        return None
    return (f"{backend.name} cannot {op} memories: it keeps no discrete memories "
            "(pin an item instead, or switch to mem0, mem0r, amem or codemem)")


def _method(backend: Any, op: str) -> Callable[..., Any]:
    why = unsupported(backend, op)
    if why is not None:
        raise SteeringUnsupported(why)
    return getattr(backend, op)  # type: ignore[no-any-return]


async def forget(backend: Any, memory_id: str) -> str:
    """Forget ``memory_id`` in ``backend``; its text. SteeringUnsupported / SteeringError."""
    method = _method(backend, "forget")
    try:
        return str(await method(memory_id))
    except KeyError as exc:
        raise SteeringError(f"{backend.name} holds no memory {memory_id!r}") from exc


async def edit(backend: Any, memory_id: str, text: str) -> str:
    """Replace the text of ``memory_id``; the old text. SteeringUnsupported / SteeringError."""
    text = text.strip()
    if not text:
        raise SteeringError("a memory cannot be empty; forget it instead")
    method = _method(backend, "edit")
    try:
        return str(await method(memory_id, text))
    except KeyError as exc:
        raise SteeringError(f"{backend.name} holds no memory {memory_id!r}") from exc


def resolve(backend: Any, record: dict[str, Any]) -> str | None:
    """The id, in ``backend``, of the memory a recorded forget/edit was about: the same id,
    else the live memory with the same text (a rebuilt store has new ids)."""
    items = memories_of(backend) or []
    wanted = str(record.get("id", ""))
    if any(m.id == wanted for m in items):
        return wanted
    text = str(record.get("old") if record.get("op") == "edit" else record.get("text", ""))
    return next((m.id for m in items if m.text == text), None)


async def replay_op(backend: Any, record: dict[str, Any]) -> str | None:
    """Apply a recorded forget/edit to ``backend`` again; why it could not, or None."""
    memory_id = resolve(backend, record)
    if memory_id is None:
        return f"{record.get('op')} of {record.get('id')!r} not replayed: no such memory"
    try:
        if record.get("op") == "forget":
            await forget(backend, memory_id)
        else:
            await edit(backend, memory_id, str(record.get("text", "")))
    except (SteeringUnsupported, SteeringError) as exc:
        return str(exc)
    return None


def segments(turns: list[Turn], ops: list[dict[str, Any]]
             ) -> Iterable[tuple[list[Turn], list[dict[str, Any]]]]:
    """``turns`` cut where recorded operations happened: (turns, the ops done after them).

    An op's ``after`` counts the session's turns (failed ones too) when it was done."""
    start = 0
    for after in sorted({int(op.get("after", 0)) for op in ops}):
        yield turns[start:after], [op for op in ops if int(op.get("after", 0)) == after]
        start = max(start, after)
    yield turns[start:], []


@dataclass
class Pin:
    kind: str
    source: str
    sections: list[Section] = field(default_factory=list)


def _turn_number(section: Section) -> int:
    try:
        return int(section.source.rsplit(":", 1)[-1])
    except ValueError:
        return -1


class Steering:
    """The developer's pins, applied by the Agent to every context it builds."""

    def __init__(self) -> None:
        self.pins: dict[str, Pin] = {}

    def pinned(self, source: str) -> bool:
        return source in self.pins

    def pin(self, kind: str, source: str, sections: list[Section]) -> None:
        self.pins[source] = Pin(kind, source, [Section(s.kind, s.source, s.text, s.tokens,
                                                       s.role) for s in sections])

    def unpin(self, source: str) -> bool:
        return self.pins.pop(source, None) is not None

    def edited(self, source: str, text: str, count: Callable[[str], int]) -> None:
        """A pinned memory whose text was edited: the pin shows the new text."""
        pin = self.pins.get(source)
        if pin is not None:
            pin.sections = [Section(pin.kind, source, f"- {text}", count(f"- {text}"))]  # type: ignore[arg-type]

    def apply(self, pack: ContextPack, budget: int) -> list[str]:
        """Put every pin into ``pack`` (system sections excluded from ``budget``), dropping
        unpinned sections when the budget is short; returns the pins that did not fit."""
        have = {s.source for s in pack.sections}
        for pin in self.pins.values():
            if pin.source not in have:
                pack.sections.extend(pin.sections)
        for section in pack.sections:
            section.pinned = section.source in self.pins
        left_out: list[str] = []
        used = sum(cost(s) for s in pack.sections if s.kind != "system")
        for kind in DROP_ORDER:
            group = [s for s in pack.sections if s.kind == kind and not s.pinned]
            if kind == "history":
                group.reverse()  # the oldest turn goes first: drop from the front
            while used > budget and group:
                dropped = group.pop()
                pack.sections.remove(dropped)
                used -= cost(dropped)
        for pin in reversed(list(self.pins.values())):  # still over: the newest pins go
            if used <= budget:
                break
            for section in pin.sections:
                if section in pack.sections:
                    pack.sections.remove(section)
                    used -= cost(section)
            left_out.append(pin.source)
        history = sorted((s for s in pack.sections if s.kind == "history"), key=_turn_number)
        others = [s for s in pack.sections if s.kind != "history"]
        system = [s for s in others if s.kind == "system"]
        pack.sections[:] = [*system, *history, *(s for s in others if s.kind != "system")]
        return left_out

    def restore(self, records: list[dict[str, Any]], turns: list[Turn],
                count: Callable[[str], int]) -> None:
        """Fold recorded pin/unpin/forget/edit records back into the pins."""
        by_index = {t.index: t for t in turns}
        for record in records:
            op, source = record.get("op"), str(record.get("id", ""))
            if op == "pin":
                self.pin(*_pin_sections(record, by_index, count))
            elif op in ("unpin", "forget"):
                self.unpin(source)
            elif op == "edit":
                self.edited(source, str(record.get("text", "")), count)


def _pin_sections(record: dict[str, Any], turns: dict[int, Turn],
                  count: Callable[[str], int]) -> tuple[str, str, list[Section]]:
    kind, source, text = str(record.get("kind", "memory")), str(record["id"]), \
        str(record.get("text", ""))
    if kind == "history":
        from memory.backends.base import turn_sections

        number = _turn_number(Section("history", source, ""))
        if number in turns:
            return kind, source, turn_sections(turns[number], count)
    return kind, source, [Section(kind, source, text, count(text))]  # type: ignore[arg-type]


def user_ops(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The developer's steering records among a transcript's records, in order."""
    return [r for r in records if r.get("type") == "memory" and r.get("by") == "user"
            and r.get("op") in USER_OPS]
