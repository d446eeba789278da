"""One LoCoMo conversation through one backend: its sessions fed in order, then its questions.

Feeding: every turn of every session, in session order, is one turn the backend observes
(``Agent.commit``; no model answers it): the user side holds the session's date and time as
LoCoMo's evaluation gives them (``DATE: 1:56 pm on 8 May, 2023``, on every turn so that a
turn retrieved alone keeps its date) and the turn with its speaker named (``Caroline said,
"..."``, an image as ``[shares a photo of: <caption>]``); the assistant side is empty.

Questions: each is asked against the memory as it stands after the last session, with
``commit=False`` (no question becomes a memory: the backend's ``state_digest`` is checked
unchanged after them). The context is built for the bare question, as LoCoMo's retrieval
embeds it; the model is asked it with LoCoMo's additions (category 2's hint to use the
dates, category 5's choice between the adversarial answer and "Not mentioned"), which
would otherwise reach the retrieval too (category 5's choice holds the words of its
evidence). With a reader, the answer is scored by LoCoMo's metrics and, with a
judge model, by J; reader-free (``--reader-free``), only the context is built
(``Agent.context``), scored for evidence recall and its tokens.
"""

from __future__ import annotations

import dataclasses
import random
import time
from typing import TYPE_CHECKING, Any

from memory.types import Turn
from replay.locomo.data import ADVERSARIAL, Conversation, Question, Session
from replay.locomo.evidence import context_text, context_tokens, recall
from replay.locomo.score import score

if TYPE_CHECKING:
    from memory.turn.agent import Agent
    from replay.benchmark import Tick
    from replay.locomo.judge import Judge

SYSTEM = (
    "You answer questions about a long conversation between {a} and {b}, held over several "
    "sessions, from the parts of it shown to you (each turn with its session's date and "
    "time). Answer with a short phrase, in the conversation's own words where you can.")
TEMPORAL_HINT = "Use the sessions' dates to answer with an approximate date."
NOT_MENTIONED = "Not mentioned in the conversation"
# LoCoMo's evaluation asks its readers for 32 tokens (task_eval/evaluate_gpts.py,
# num_tokens_request=32): an answer is a short phrase, and a small model left replay's 512
# rambles on for hundreds of tokens (SmolLM2 on conv-26: answers of up to 300 words)
ANSWER_TOKENS = 32


def said(session: Session, text: str) -> str:
    return f"DATE: {session.date_time}\n{text}"


def prompt(question: Question, seed: int) -> str:
    """The question as it is asked (its context is built for the bare question): category 2 with
    LoCoMo's hint to use the dates, category 5 as LoCoMo's choice between the adversarial
    answer and "Not mentioned in the conversation", in an order the seed gives."""
    if question.category == 2:
        return f"{question.question} {TEMPORAL_HINT}"
    if question.category == ADVERSARIAL:
        options = [NOT_MENTIONED, question.answer]
        random.Random(f"{seed}:{question.index}").shuffle(options)
        return (f"{question.question} Select the correct answer: (a) {options[0]} "
                f"(b) {options[1]}.")
    return question.question


async def feed(agent: Agent, conversation: Conversation, tick: Tick, total: int) -> int:
    """Every session's turns, in order; returns how many turns were fed."""
    n = 0
    for session in conversation.sessions:
        for turn in session.turns:
            await agent.commit(Turn(index=n, user=said(session, turn.said()), assistant="",
                                    backend=agent.backend.name, model=agent.llm.model))
            n += 1
            tick(n, total)
    return n


def _digest(agent: Agent) -> str | None:
    state = getattr(agent.backend, "state_digest", None)
    return state() if callable(state) else None


async def run(agent: Agent, conversation: Conversation, *, seed: int, reader_free: bool,
              judge: Judge | None, tick: Tick, questions: int | None = None
              ) -> dict[str, Any]:
    """The conversation's ``locomo`` result: per question, and how the run went;
    ``questions``: the first N of them only (None: all)."""
    asking = conversation.questions[:questions] if questions else conversation.questions
    turns = len(conversation.turns())
    total = turns + len(asking)
    said = SYSTEM.format(a=conversation.speaker_a, b=conversation.speaker_b)
    # the agent formats its system prompt with the repository's name: braces kept as said;
    # answers capped as LoCoMo's evaluation caps them (or lower, by --max-tokens)
    agent.config = dataclasses.replace(
        agent.config, system_prompt=said.replace("{", "{{").replace("}", "}}"),
        max_answer_tokens=min(agent.config.max_answer_tokens, ANSWER_TOKENS))
    started = time.time()
    fed = await feed(agent, conversation, tick, total)
    fed_seconds = time.time() - started
    before = _digest(agent)
    answers: list[dict[str, Any]] = []
    for n, question in enumerate(asking):
        asked = prompt(question, seed)
        row: dict[str, Any] = {"question": question.id, "category": question.category}
        if reader_free:
            pack = await agent.context(question.question)
        else:
            turn = await agent.ask(asked, commit=False, about=question.question)
            pack = agent.last_pack
            row["answer"] = turn.assistant
            row["error"] = turn.error
            row["score"] = score(question.category, turn.assistant, question.answer)
            if judge is not None and question.category != ADVERSARIAL and turn.ok:
                row["j"] = await judge.verdict(question.question, question.answer,
                                               turn.assistant)
        if pack is not None:
            found = recall(conversation, question, context_text(pack))
            row.update(evidence=found.evidence, found=found.found,
                       session_found=found.session_found, unknown_evidence=found.unknown,
                       context_tokens=context_tokens(pack))
        answers.append(row)
        tick(fed + n + 1, total)
    after = _digest(agent)
    return {"reader_free": reader_free, "turns": fed, "sessions": len(conversation.sessions),
            "questions": len(answers), "answer_tokens": agent.config.max_answer_tokens,
            "feed_seconds": round(fed_seconds, 3),
            "question_seconds": round(time.time() - started - fed_seconds, 3),
            "state_unchanged": None if before is None else before == after,
            "judge_failures": judge.failures if judge is not None else None,
            "answers": answers}
