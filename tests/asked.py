"""What a scripted model is asked, read back from the messages engram sends
(``ContextPack.to_messages``): the system prompt, the developer's query, this answer's
function calls so far, and whether the request is a tool-loop step.

The calls and a step's prompt follow the query in its message (so that every request of
a turn begins alike); a scripted model that answers by query or reads the calls' outputs
takes them apart here, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.acting.toolloop import STEP_PROMPT
from memory.types import CALLS_TITLE

STEP = STEP_PROMPT.split("{", 1)[0].strip()  # "Before you answer, you may call one of your"
CALLS = f"\n\n## {CALLS_TITLE}\n\n"


@dataclass(frozen=True)
class Asked:
    system: str  # the system message ("" when none)
    query: str  # the last message without the calls and the step's prompt
    calls: str  # this answer's function calls as shown ("" when none yet)
    step: str  # the step's prompt ("" when the model is asked to answer)
    earlier: str  # every message before the last, joined

    @property
    def seen(self) -> str:
        """All the model was shown besides the query: earlier messages and the calls."""
        return f"{self.earlier}\n{self.calls}" if self.calls else self.earlier


def asked(messages: list[dict[str, Any]]) -> Asked:
    system = str(messages[0]["content"]) if messages and messages[0]["role"] == "system" \
        else ""
    last = str(messages[-1]["content"]) if messages else ""
    step = ""
    at = last.find("\n\n" + STEP)
    if at < 0 and last.startswith(STEP):
        at = 0
    if at >= 0:
        last, step = last[:at], last[at:].strip()
    query, _, calls = last.partition(CALLS)
    earlier = "\n".join(str(m["content"]) for m in messages[:-1])
    return Asked(system, query, calls, step, earlier)
