"""The calls of one turn's tool loop as the model sees them, and how they are kept within
the window.

A ``Trajectory`` holds each ``Step`` (a call, its arguments and its whole output) and
how it is shown now: ``whole``; ``masked`` (the call kept, the output replaced by a
one-line placeholder: observation masking); ``summarised`` (folded with other steps
into the trajectory's summary); ``clipped`` (the output cut to fit) or ``dropped`` (not
shown at all, the last resort when even a placeholder does not fit). A ``Condenser`` (a
backend's policy: ``mask`` masks old outputs, ``compact`` summarises them) acts first;
``fit`` then makes sure the steps fit the room left in the window, whatever the backend.
Every change is an ``Event``: the record of what the model no longer sees, kept in the
turn's meta (``tools.dropped``) for the transcript and the inspector.

``trail(turn)`` reads a recorded turn's calls back (``meta["tools"]["calls"]``) so that
memories can show or mask them in later turns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from memory.types import Section, Turn

Count = Callable[[str], int]
WHOLE, MASKED, SUMMARISED, CLIPPED, DROPPED = "whole", "masked", "summarised", "clipped", \
    "dropped"
CLIP_NOTE = "\n[... output cut here to fit the context window: {n} more characters]"


def call_line(function: str, args: dict[str, Any]) -> str:
    return f"{function}({json.dumps(args, ensure_ascii=False)})"


def placeholder(function: str, output: str, ok: bool = True) -> str:
    """The one line standing for a masked output: its size and its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = ""
    if lines:
        tail = lines[-1] if len(lines[-1]) <= 80 else lines[-1][:80] + "..."
        last = f"; last line: {tail}"
    failed = " (the call failed)" if not ok else ""
    return (f"[output of {function} omitted{failed}: {len(output.splitlines())} lines, "
            f"{len(output)} characters{last}]")


@dataclass
class Step:
    """One call of the loop: what was asked, what came back, how it is shown now."""

    index: int  # 1-based, in the order of the calls
    function: str
    args: dict[str, Any]
    ok: bool
    output: str
    state: str = WHOLE
    shown: str = ""  # the output as shown when clipped or masked

    def render(self) -> str:
        status = "" if self.ok else " (failed)"
        head = f"Function call {call_line(self.function, self.args)}{status} returned:\n"
        if self.state == WHOLE:
            return head + self.output
        return head + self.shown

    def mask(self) -> str:
        self.state, self.shown = MASKED, placeholder(self.function, self.output, self.ok)
        return self.shown


@dataclass(frozen=True)
class Event:
    """What the model stopped seeing of a step, by whose policy and why."""

    step: int
    function: str
    action: str  # masked | summarised | clipped | dropped
    by: str  # the policy: a backend's name, or "window"
    tokens_before: int
    tokens_after: int
    text: str = ""  # the placeholder or summary that stands for it

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Trajectory:
    steps: list[Step] = field(default_factory=list)
    summary: str = ""  # of the summarised steps
    events: list[Event] = field(default_factory=list)

    def shown(self) -> list[Step]:
        return [s for s in self.steps if s.state not in (SUMMARISED, DROPPED)]

    def summary_text(self) -> str:
        folded = [s.index for s in self.steps if s.state == SUMMARISED]
        if not self.summary or not folded:
            return ""
        return f"Summary of calls {folded[0]}-{folded[-1]} (their outputs are no longer " \
               f"shown):\n{self.summary}"

    def sections(self, count: Count) -> list[Section]:
        sections = []
        if text := self.summary_text():
            sections.append(Section("calls", "calls:summary", text, count(text)))
        for step in self.shown():
            text = step.render()
            source = f"call:{step.index}:{step.function}"
            if step.state != WHOLE:
                source += f":{step.state}"
            sections.append(Section("calls", source, text, count(text)))
        return sections

    def tokens(self, count: Count) -> int:
        return sum(s.tokens for s in self.sections(count))

    def note(self, step: Step, action: str, by: str, before: int, after: int,
             text: str = "") -> None:
        self.events.append(Event(step.index, step.function, action, by, before, after, text))


class Condenser(Protocol):
    """A backend's policy for the outputs of a long turn (called after every call)."""

    name: str

    async def condense(self, trajectory: Trajectory, room: int, count: Count) -> None:
        ...


def fit(trajectory: Trajectory, room: int, count: Count) -> None:
    """Make the shown steps fit ``room`` tokens: mask the oldest outputs (whole or
    clipped), then clip the newest, then drop the oldest steps; each change recorded as
    by ``window``."""
    def over() -> bool:
        return trajectory.tokens(count) > room

    for step in trajectory.shown():  # oldest first; the newest is clipped rather than hidden
        if not over() or step is trajectory.steps[-1]:
            break
        if step.state in (WHOLE, CLIPPED):  # a placeholder keeps the call in view
            before = count(step.render())
            text = step.mask()
            trajectory.note(step, MASKED, "window", before, count(step.render()), text)
    newest = trajectory.steps[-1] if trajectory.steps else None
    if over() and newest is not None and newest.state in (WHOLE, CLIPPED):
        _clip(trajectory, newest, room, count)
    for step in trajectory.shown():
        if not over():
            break
        before = count(step.render())
        step.state = DROPPED
        trajectory.note(step, DROPPED, "window", before, 0)
    if over() and trajectory.summary:  # the summary itself is the last thing to go
        trajectory.summary = ""


def _clip(trajectory: Trajectory, step: Step, room: int, count: Count) -> None:
    others = trajectory.tokens(count) - count(step.render())
    step.state = WHOLE  # clipped again from the whole output
    head = step.render()[: len(step.render()) - len(step.output)]
    allowed = room - others - count(head) - count(CLIP_NOTE.format(n=len(step.output)))
    if allowed <= 0:
        step.state = CLIPPED  # not even the start fits: the step will be dropped
        step.shown = CLIP_NOTE.format(n=len(step.output))
        return
    before = count(step.render())
    low, high = 0, len(step.output)  # the longest prefix within ``allowed`` tokens
    while low < high:
        mid = (low + high + 1) // 2
        if count(step.output[:mid]) <= allowed:
            low = mid
        else:
            high = mid - 1
    step.state = CLIPPED
    step.shown = step.output[:low] + CLIP_NOTE.format(n=len(step.output) - low)
    trajectory.note(step, CLIPPED, "window", before, count(step.render()))


@dataclass(frozen=True)
class Call:
    """A recorded call of a past turn."""

    function: str
    args: dict[str, Any]
    ok: bool
    output: str

    @property
    def line(self) -> str:
        return call_line(self.function, self.args)


def trail(turn: Turn) -> list[Call]:
    """The calls a recorded turn made in its tool loop (none when it made none)."""
    tools = turn.meta.get("tools")
    calls = tools.get("calls") if isinstance(tools, dict) else None
    found = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict) or not isinstance(call.get("function"), str):
            continue
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        found.append(Call(call["function"], args, bool(call.get("ok", True)),
                          str(call.get("result", ""))))
    return found
