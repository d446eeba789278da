"""The steps of an Agent's answer after its context is built: streaming the answer
(stopped when it repeats itself) and a backend's review asking for one regeneration;
and what a turn's meta counts of its structured calls."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memory.llm.client import LLM, LLMError
from memory.llm.local import LocalModelError
from memory.llm.repetition import RepetitionDetector, kept
from memory.types import ContextPack, Turn

if TYPE_CHECKING:
    from memory.backends import Backend
    from memory.turn.agent import AgentConfig

log = logging.getLogger(__name__)

STRUCTURED = "structured"  # turn.meta key: the turn's structured calls and skipped updates
STOPPED = "stopped"  # turn.meta key: the answer's stream was stopped (it repeated itself)


class _RepeatingStream(LocalModelError):
    """Raised from the token callback to end an answer that repeats itself. A
    ``LocalModelError`` so that ``LLM.stream`` ends the call at once, never retries it and
    needs no litellm to say why (whatever the model: ``Agent`` catches it)."""


def structured_counts(calls: dict[str, int],
                      issues: list[dict[str, Any]] | None = None) -> dict[str, int]:
    """What a turn's meta counts: structured calls (``LLM.stats`` deltas), corrective
    retries, answers that needed the lenient parser, calls that failed for good, and the
    memory updates skipped or failed (``memory`` records, op ``skipped`` / ``error``)."""
    issues = issues or []
    return {"calls": calls.get("calls", 0), "retries": calls.get("retries", 0),
            "lenient": calls.get("lenient", 0), "failed": calls.get("failed", 0),
            "skipped": sum(1 for i in issues if i.get("op") == "skipped"),
            "errors": sum(1 for i in issues if i.get("op") == "error")}


async def stream_answer(llm: LLM, config: AgentConfig, pack: ContextPack, turn: Turn,
                        on_token: Callable[[str], None] | None) -> str:
    """The answer, streamed to ``on_token``. One that starts repeating itself (the
    same sentence, line or paragraph, ``memory.llm.repetition``) is stopped there, kept up
    to its first copy, and the stop noted in ``turn.meta["stopped"]``; so is one whose
    last line, when it ended, made the repetition."""
    guard = RepetitionDetector() if config.stop_repetition else None

    def piece(text: str) -> None:
        if on_token is not None:
            on_token(text)
        if guard is not None and guard.feed(text) is not None:
            raise _RepeatingStream("the answer repeats itself")

    try:
        text = await llm.stream(
            pack.to_messages(), purpose="answer",
            on_token=piece if guard is not None or on_token is not None else None,
            max_tokens=config.max_answer_tokens, temperature=config.answer_temperature,
        )
    except LLMError as exc:
        if guard is None or guard.found is None \
                or not isinstance(exc.__cause__, _RepeatingStream):
            raise
        turn.meta[STOPPED] = guard.found.as_meta()
        return kept(guard.text, guard.found)
    if guard is not None and (found := guard.finish()) is not None:  # the last copy ended it
        turn.meta[STOPPED] = found.as_meta()
        return kept(text, found)
    return text


async def review_answer(llm: LLM, config: AgentConfig, backend: Backend, turn: Turn,
                        pack: ContextPack) -> None:
    """Let a backend that checks answers (``review``) ask for one regeneration.

    ``review(turn, pack)`` returns the messages to answer again from, or None; it
    may note what it found in ``turn.meta``. The first answer is kept in the meta;
    a failing review or regeneration keeps the first answer."""
    review = getattr(backend, "review", None)
    if review is None or not turn.assistant.strip():
        return
    try:
        messages = await review(turn, pack)
    except Exception as exc:
        log.warning("%s: reviewing the answer failed: %s", backend.name, exc)
        return
    if not messages:
        return
    note = turn.meta.setdefault(backend.name, {})
    try:
        again = await llm.complete(messages, purpose="answer",
                                   max_tokens=config.max_answer_tokens)
    except LLMError as exc:
        note["regeneration_error"] = str(exc)
        return
    if again.strip():
        note["first_answer"] = turn.assistant
        note["regenerated"] = True
        turn.assistant = again
