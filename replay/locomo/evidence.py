"""Reader-free evidence recall: which of a question's evidence turns the context holds.

A turn is in the context when its text (whitespace collapsed, case-folded) appears in the
text of the context's sections other than the system prompt. Beside it, the session-level
match a backend that retrieves whole sessions is owed: an evidence turn counts when some
turn of its session is in the context, a turn that stands for its session: of at least
``SESSION_WORDS`` words and said in no other session (a "Yes!" or a "How was your week?"
said every week stands for none). Evidence ids the conversation does not have (LoCoMo's
file has a few) are counted apart, never in the denominator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.types import ContextPack
    from replay.locomo.data import Conversation, Question

SESSION_WORDS = 4


def flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def context_text(pack: ContextPack) -> str:
    """What memory put in the context (the system prompt left out), flattened."""
    return flat("\n".join(s.text for s in pack.sections if s.kind != "system"))


def context_tokens(pack: ContextPack) -> int:
    return sum(s.tokens for s in pack.sections if s.kind != "system")


@dataclass(frozen=True)
class Recall:
    evidence: int  # evidence turns the conversation has
    found: int  # of them, in the context
    session_found: int  # of them, with some turn of their session in the context
    unknown: int  # evidence ids the conversation does not have

    @property
    def turn_recall(self) -> float | None:
        return self.found / self.evidence if self.evidence else None

    @property
    def session_recall(self) -> float | None:
        return self.session_found / self.evidence if self.evidence else None


def session_marks(conversation: Conversation) -> dict[int, list[str]]:
    """Per session, the flattened texts of its turns that stand for it."""
    where: dict[str, set[int]] = {}
    for turn in conversation.turns():
        if len(turn.text.split()) >= SESSION_WORDS:
            where.setdefault(flat(turn.text), set()).add(turn.session)
    marks: dict[int, list[str]] = {}
    for text, sessions in where.items():
        if len(sessions) == 1:
            marks.setdefault(next(iter(sessions)), []).append(text)
    return marks


def recall(conversation: Conversation, question: Question, context: str) -> Recall:
    """``context``: ``context_text`` of the pack built for the question."""
    marks = session_marks(conversation)
    shown: dict[int, bool] = {}  # session number -> some turn of it in the context

    def session_shown(number: int) -> bool:
        if number not in shown:
            shown[number] = any(text in context for text in marks.get(number, ()))
        return shown[number]

    evidence = found = in_session = unknown = 0
    for dia_id in question.evidence:
        turn = conversation.turn(dia_id)
        if turn is None:
            unknown += 1
            continue
        evidence += 1
        hit = bool(flat(turn.text)) and flat(turn.text) in context
        found += int(hit)
        in_session += int(hit or session_shown(turn.session))
    return Recall(evidence, found, in_session, unknown)
