"""Whether a command may run: asked per command, allowed for the session, or denied.

The app gives an ``asker`` (a callback showing the command and returning the
developer's ``Decision``); headless ``--apply``-style use makes the policy with
``allow_all`` instead. With neither, nothing runs. ``Decision.SESSION`` allows that same
command (the same words) for the rest of the session without asking again; ``ONCE``
allows this run only; ``DENY`` refuses it. Every answer is kept (``history``) and
said in the call's record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum


class Decision(StrEnum):
    ONCE = "once"
    SESSION = "session"
    DENY = "deny"


Asker = Callable[[str], Awaitable[Decision]]


@dataclass(frozen=True)
class Asking:
    """Who asks for a command: the answer being made (``memory.turn.agent`` sets it for each
    answer): its backend and model, and in an A/B which of the answers (``side``)."""

    backend: str
    model: str
    side: str = ""

    def __str__(self) -> str:
        who = f"backend {self.backend}, model {self.model}"
        return f"answer {self.side} of the A/B ({who})" if self.side else f"the model ({who})"


# the answer under way in this task: an asker shows it (the app's modal names the A/B pane)
ASKING: ContextVar[Asking | None] = ContextVar("engram_asking", default=None)


@dataclass(frozen=True)
class Consent:
    allowed: bool
    how: str  # asked-once | asked-session | session | preallowed | denied | no-asker | asker-failed

    @property
    def message(self) -> str:
        return {"denied": "The developer denied this command. Do not ask for it again "
                          "in this turn: answer with what you have.",
                "no-asker": "No one can be asked to allow commands here, and commands are "
                            "not allowed in advance: nothing was run.",
                "asker-failed": "Asking the developer failed: nothing was run."}.get(
                    self.how, "")


@dataclass
class ConsentPolicy:
    asker: Asker | None = None
    allow_all: bool = False  # headless --apply: every command allowed (still in the jail)
    allowed: set[str] = field(default_factory=set)  # commands allowed for the session
    history: list[tuple[str, str]] = field(default_factory=list)  # (command, how)

    @classmethod
    def preallowed(cls) -> ConsentPolicy:
        return cls(allow_all=True)

    @classmethod
    def deny_all(cls) -> ConsentPolicy:
        return cls()

    async def check(self, command: str) -> Consent:
        consent = await self._decide(" ".join(command.split()))
        self.history.append((command, consent.how))
        return consent

    async def _decide(self, key: str) -> Consent:
        if self.allow_all:
            return Consent(True, "preallowed")
        if key in self.allowed:
            return Consent(True, "session")
        if self.asker is None:
            return Consent(False, "no-asker")
        try:
            decision = Decision(await self.asker(key))
        except Exception:  # a broken prompt never runs a command
            return Consent(False, "asker-failed")
        if decision is Decision.SESSION:
            self.allowed.add(key)
            return Consent(True, "asked-session")
        if decision is Decision.ONCE:
            return Consent(True, "asked-once")
        return Consent(False, "denied")
