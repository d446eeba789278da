"""``ldagent`` (Li et al., 2024, "Hello Again!"): event memory and personas.

- Short-term memory: the turns of the current session (the newest 30, LD-Agent's
  ``context_memory_number``).
- Long-term memory: when a session closes, the LLM summarises it into one event
  (LD-Agent asks for the main points "within 20 words"), keyed by the session's topic
  nouns. A session closes when the next turn comes after an idle gap of an hour (the
  public implementation's gap), or, with ``ldagent_session_turns`` = N (for replays,
  whose turns come without pauses), when a session holds N turns.
- Retrieval (the public implementation's ``relevance_retrieve``): the 10 events whose
  topic key is most similar to the query's nouns are scored by topic overlap
  ``0.5 * |Q∩M|/|Q| + 0.5 * |Q∩M|/|M|`` times the time decay ``exp(-1e-7 * seconds)``;
  events sharing no topic are dropped; the best one is shown (``relevance_memory_number``).
- Personas: after each turn the LLM extracts the developer's traits from their message
  and the assistant's from its answer; all are kept and shown.
- The context: retrieved events + personas + the session's turns + the top-10
  repository functions.

engram has no POS tagger: topic nouns come from ``_topics.terms`` (identifiers, paths
and content words). One call extracts both personas (LD-Agent makes two). A failed
summary leaves the session open (summarised at the next close); a failed persona call
is skipped; both are recorded. State lives in memory and is rebuilt on a switch.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.backends._journal import Journal
from memory.backends._topics import terms
from memory.backends.base import (
    BackendEnv,
    Digest,
    exchange,
    newest_that_fit,
    repo_sections,
    split_budget,
    turn_sections,
)
from memory.backends.mem0 import statements
from memory.index.embed import cosine, top_k
from memory.llm.client import LLMError
from memory.types import ContextPack, Section, Turn

SESSION_GAP = 3600.0  # idle seconds that close a session
SHORT_TERM = 30  # turns of the current session shown
CANDIDATES = 10  # events by similarity, then scored by topics and time
EVENTS = 1  # events shown
DECAY = 1e-7  # time-decay temperature, per second
MAX_TRAITS = 3  # per speaker and turn
CLIP = 1200  # characters of each side of a turn shown to the summariser

SUMMARY_PROMPT = """You summarise a finished session between a developer and a coding
assistant into one event for long-term memory. Give the main points in one or two
brief sentences (at most 20 words): what was asked, decided or built, naming the files
and functions involved.

Example.
Answer: {"summary": "Made parse_date in utils/dates.py return UTC; logging replaces print."}"""
# {"summary": str}

PERSONA_PROMPT = """You extract personas for a coding assistant's memory. From one
exchange, list the traits each speaker shows about themself: for the developer their
role, expertise, preferences, conventions and tools; for the assistant what it commits
to or how it works. Copy or condense short sentences; an empty list when there is none.

Example.
Developer: I maintain the billing service and I always use type hints.
Assistant: Understood, I will add type hints to every function I write.
Answer: {"developer": ["I maintain the billing service.", "I always use type hints."],
"assistant": ["I will add type hints to every function I write."]}"""
# {"developer": [str], "assistant": [str]}

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string", "minLength": 3, "maxLength": 160}},
    "required": ["summary"], "additionalProperties": False,
}
SUMMARY_SENTENCES = 3  # chosen under constrained decoding


def summary_schema(choices: list[str] | None) -> dict[str, Any]:
    """A free one-sentence summary, or (constrained decoding: a bounded string is slow
    under llama.cpp's grammar) up to three sentences chosen among the session's own."""
    if choices is None:
        return SUMMARY_SCHEMA
    summary = {"type": "array", "minItems": 1 if choices else 0,
               "maxItems": min(SUMMARY_SENTENCES, len(choices)),
               "items": {"type": "string", "enum": choices} if choices else {"type": "string"}}
    return {"type": "object", "properties": {"summary": summary},
            "required": ["summary"], "additionalProperties": False}


def persona_schema(developer: list[str] | None, assistant: list[str] | None) -> dict[str, Any]:
    """Free sentences, or (constrained decoding) sentences chosen among the speaker's own."""
    def side(choices: list[str] | None) -> dict[str, Any]:
        if choices is None:
            return {"type": "array", "maxItems": MAX_TRAITS,
                    "items": {"type": "string", "minLength": 3, "maxLength": 200}}
        if not choices:
            return {"type": "array", "maxItems": 0, "items": {"type": "string"}}
        return {"type": "array", "maxItems": min(MAX_TRAITS, len(choices)),
                "items": {"type": "string", "enum": choices}}

    return {"type": "object",
            "properties": {"developer": side(developer), "assistant": side(assistant)},
            "required": ["developer", "assistant"], "additionalProperties": False}


@dataclass
class Event:
    id: str
    summary: str
    topics: list[str]
    time: float  # when the session ended
    turns: list[int] = field(default_factory=list)


def overlap_score(query: list[str], topics: list[str]) -> float:
    """LD-Agent's topic overlap: the shared nouns' share of each side, averaged."""
    if not query or not topics:
        return 0.0
    shared = len(set(query) & set(topics))
    return 0.5 * shared / len(set(query)) + 0.5 * shared / len(set(topics))


class LDAgentBackend:
    name = "ldagent"

    def __init__(self, env: BackendEnv, clock: Callable[[], float] = time.time) -> None:
        self.env = env
        self.clock = clock
        self.session_turns = int(env.options.get("ldagent_session_turns", 0))  # type: ignore[call-overload]
        self.session_gap = float(env.options.get("ldagent_session_gap", SESSION_GAP))  # type: ignore[arg-type]
        self.session: list[Turn] = []
        self.events: list[Event] = []
        self._event_vectors = np.zeros((0, env.embedder.dim), dtype=np.float32)
        self.personas: dict[str, list[str]] = {"developer": [], "assistant": []}
        self.journal = Journal(self.name)
        self._digest = Digest()


    # -- observe ----------------------------------------------------------------------
    def closes_session(self, turn: Turn) -> bool:
        """Whether ``turn`` starts a new session (idle gap, or the session is full)."""
        if not self.session:
            return False
        if self.session_turns > 0 and len(self.session) >= self.session_turns:
            return True
        last = self.session[-1]
        return turn.started - (last.finished or last.started) > self.session_gap

    async def observe(self, turn: Turn) -> None:
        if self.closes_session(turn):
            await self.close_session()
        self.session.append(turn)
        self._digest.update("turn", turn.index, turn.user, turn.assistant)
        await self._update_personas(turn)

    async def close_session(self) -> Event | None:
        """Summarise the current session into a long-term event and start a new one."""
        if not self.session:
            return None
        turns = self.session
        text = "\n".join(exchange(t, CLIP) for t in turns)
        choices = None
        if self.env.llm.constrained():
            choices = list(dict.fromkeys(
                sentence for t in turns for sentence in statements(t.user)))
        try:
            data = await self.env.llm.ask_json(SUMMARY_PROMPT, f"Session:\n{text}\nAnswer:",
                                               summary_schema(choices), name="event",
                                               max_tokens=240)
        except LLMError as exc:
            self.journal.skip(f"session of turns {turns[0].index}-{turns[-1].index} not "
                              f"summarised (kept open): {exc}")
            return None
        chosen = data.get("summary", "")
        summary = (" ".join(map(str, chosen)) if isinstance(chosen, list) else str(chosen)).strip()
        topics = terms(" ".join(f"{t.user} {t.assistant}" for t in turns))
        event = Event(f"e{len(self.events)}", summary, topics,
                      turns[-1].finished or turns[-1].started, [t.index for t in turns])
        key = ",".join(topics) or summary
        vector = (await asyncio.to_thread(self.env.embedder.embed, [key]))[0]
        self.events.append(event)
        self._event_vectors = np.vstack([self._event_vectors, vector]).astype(np.float32)
        self.session = []
        self._digest.update("event", event.id, summary, topics, event.turns)
        self.journal.op("EVENT", event.id, summary)
        return event

    async def _update_personas(self, turn: Turn) -> None:
        developer: list[str] | None = None
        assistant: list[str] | None = None
        if self.env.llm.constrained():
            developer, assistant = statements(turn.user), statements(turn.assistant)
            if not developer and not assistant:
                return
        try:
            data = await self.env.llm.ask_json(
                PERSONA_PROMPT,
                f"{exchange(turn, CLIP)}\nAnswer:",
                persona_schema(developer, assistant), name="personas", max_tokens=300)
        except LLMError as exc:
            self.journal.skip(f"personas of turn {turn.index} skipped: {exc}")
            return
        for who in ("developer", "assistant"):
            for trait in data.get(who) or []:
                trait = str(trait).strip()
                if trait and trait not in self.personas[who]:
                    self.personas[who].append(trait)
                    self._digest.update("persona", who, trait)
                    self.journal.op("PERSONA", who, trait)

    def drain_records(self) -> list[dict[str, Any]]:
        return self.journal.drain()

    # -- context ----------------------------------------------------------------------
    def scored_events(self, query_topics: list[str], vector: np.ndarray,
                      now: float) -> list[tuple[Event, float]]:
        """Candidate events by similarity, scored by topic overlap and time decay, best
        first; events that share no topic with the query are left out."""
        if not self.events:
            return []
        scored = []
        for i in top_k(cosine(vector, self._event_vectors), CANDIDATES):
            event = self.events[int(i)]
            overlap = overlap_score(query_topics, event.topics)
            if overlap > 0:
                decay = math.exp(-DECAY * max(0.0, now - event.time))
                scored.append((event, decay * overlap))
        return sorted(scored, key=lambda pair: -pair[1])

    async def retrieve(self, query: str) -> list[Event]:
        if not self.events:
            return []
        topics = terms(query)
        key = ",".join(topics) or query
        vector = (await asyncio.to_thread(self.env.embedder.embed, [key]))[0]
        return [e for e, _ in self.scored_events(topics, vector, self.clock())][:EVENTS]

    def _fit(self, kind_source_text: list[tuple[str, str]], left: int) -> list[Section]:
        sections = []
        for source, text in kind_source_text:
            tokens = self.env.count(text)
            if tokens <= left:
                sections.append(Section("memory", source, text, tokens))
                left -= tokens
        return sections

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        left = budget - sum(s.tokens for s in repo)
        blocks: list[tuple[str, str]] = []
        for event in await self.retrieve(query):
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(event.time))
            blocks.append((event.id, f"Earlier session ({when}): {event.summary}"))
        for who, title in (("developer", "The developer"), ("assistant", "You, the assistant")):
            if self.personas[who]:
                blocks.append((f"persona:{who}",
                               f"{title}:\n" + "\n".join(f"- {p}" for p in self.personas[who])))
        memory = self._fit(blocks, left)
        left -= sum(s.tokens for s in memory)
        recent = [turn_sections(t, self.env.count) for t in self.session[-SHORT_TERM:]]
        history = newest_that_fit(recent, left)
        return ContextPack(query, [*memory, *history, *repo], self.env.count(query))

    def state_digest(self) -> str:
        return self._digest.value
