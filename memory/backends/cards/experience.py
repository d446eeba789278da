"""Experience across sessions for ``cards``: what a session decided and did, kept per
repository and seen by later sessions as summary nodes of their graph.

When a session ends (headless chat) or on ``/remember``, the current facts and the code
written are summarised in at most ``SUMMARY_WORDS`` words through the structured-output
path: the model picks the decisions worth keeping and writes the summary (under
constrained decoding both are chosen among the session's own facts, so a small model
cannot invent any). A failed call keeps the latest facts verbatim (counted as a skip).
Summaries live in ``<repo home>/experience.jsonl``, one JSON object a line, secrets
redacted; a torn or corrupt line is skipped with a count, never fatal.

A later session loads the other sessions' summaries as ``summary`` nodes (free reuse:
retrieved and scored like any unit) and ``/experience [SESSION]`` pins one so that it
reaches every context (oracle reuse, SWE-ContextBench's setting).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.redact import redact

if TYPE_CHECKING:
    from memory.backends.cards.graph import ContextGraph
    from memory.llm.client import LLM

log = logging.getLogger(__name__)

EXPERIENCE_FILE = "experience.jsonl"
SUMMARY_WORDS = 200  # SWE-ContextBench's summaries are about this long
MAX_DECISIONS = 8

SUMMARY_PROMPT = """You write the handover note of a finished coding session, for the next
session in the same repository. From the session's facts (what the developer required,
decided and revised; the code written), keep the decisions a later session must respect
and write a short summary (at most 200 words) of what was decided and done, naming the
functions and files. Answer with JSON only."""
# {"decisions": ["fact", ...], "summary": "text"}


@dataclass
class Experience:
    """One session's summary."""

    session: str
    created: float
    summary: str
    decisions: list[str] = field(default_factory=list)

    @property
    def node_id(self) -> str:
        return f"exp:{self.session}"

    def text(self) -> str:
        day = time.strftime("%Y-%m-%d", time.localtime(self.created))
        lines = [f"Session {self.session} ({day}): {self.summary}".strip()]
        lines += [f"- {d}" for d in self.decisions]
        return "\n".join(lines)


class ExperienceStore:
    """The summaries of one repository's sessions (``experience.jsonl``)."""

    def __init__(self, home: Path) -> None:
        self.path = home / EXPERIENCE_FILE
        self.corrupt = 0  # lines skipped by the last load

    def load(self) -> list[Experience]:
        """Every readable summary, latest per session, oldest first."""
        self.corrupt = 0
        if not self.path.is_file():
            return []
        found: dict[str, Experience] = {}
        for line in self.path.read_text("utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                exp = Experience(str(data["session"]), float(data["created"]),
                                 str(data["summary"]),
                                 [str(d) for d in data.get("decisions") or []])
            except (ValueError, KeyError, TypeError, RecursionError):
                self.corrupt += 1
                continue
            found[exp.session] = exp
        if self.corrupt:
            log.warning("%s: %d unreadable line(s) skipped", self.path, self.corrupt)
        return sorted(found.values(), key=lambda e: e.created)

    def save(self, exp: Experience) -> None:
        """Append ``exp``, redacted, on a line of its own (a torn last line is ended first)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = asdict(exp)
        data["summary"] = redact(data["summary"])
        data["decisions"] = [redact(d) for d in data["decisions"]]
        line = json.dumps(data, ensure_ascii=False) + "\n"
        with self.path.open("a+b") as f:
            f.seek(0, 2)
            if f.tell():
                f.seek(-1, 2)
                if f.read(1) != b"\n":
                    f.write(b"\n")
            f.write(line.encode("utf-8"))


def summary_schema(facts: list[str] | None) -> dict[str, Any]:
    """Free decisions and summary, or (constrained decoding: ``facts`` given) decisions
    and summary sentences chosen among the session's facts."""
    item: dict[str, Any] = {"type": "string", "enum": facts} if facts else {"type": "string"}
    summary: dict[str, Any] = ({"type": "array", "items": item, "maxItems": 3} if facts
                               else {"type": "string"})
    return {"type": "object",
            "properties": {"decisions": {"type": "array", "items": item,
                                         "maxItems": MAX_DECISIONS},
                           "summary": summary},
            "required": ["decisions", "summary"], "additionalProperties": False}


def session_facts(graph: ContextGraph) -> list[str]:
    """What the session left standing: its current facts (oldest first), then the
    functions it wrote."""
    facts = [n for n in graph.current() if n.type == "fact" and n.source.startswith("turn:")]
    code = [n for n in graph.current() if n.type == "code" and n.subject]
    lines = [n.content for n in sorted(facts, key=lambda n: (n.turn, n.id))]
    lines += [f"Wrote `{n.subject}` (turn {n.turn})." for n in sorted(code, key=lambda n: n.turn)]
    return list(dict.fromkeys(lines))


def clip_words(text: str, words: int = SUMMARY_WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


async def summarise(llm: LLM, session: str, facts: list[str]) -> tuple[Experience, str]:
    """The session's summary, and why the model's answer was not used ('' when it was)."""
    from memory.llm.client import LLMError
    from memory.llm.lenient_json import MalformedJSON

    listed = "\n".join(f"- {f}" for f in facts)
    choices = facts if llm.constrained() else None
    try:
        data = await llm.ask_json(SUMMARY_PROMPT, f"Session facts:\n{listed}\nAnswer:",
                                  summary_schema(choices), name="experience", max_tokens=400)
        decisions = [str(d).strip() for d in data.get("decisions") or [] if str(d).strip()]
        summary = data.get("summary") or ""
        if isinstance(summary, list):  # chosen sentences: those not kept as decisions
            summary = " ".join(str(s) for s in summary if str(s).strip() not in decisions)
        if not summary.strip() and not decisions:
            raise MalformedJSON("empty summary")
        why = ""
    except (MalformedJSON, LLMError, AttributeError, TypeError) as exc:
        decisions, summary = facts[-MAX_DECISIONS:], ""
        why = f"session summary by the model failed ({exc}); kept the latest facts"
    decisions = list(dict.fromkeys(decisions))[:MAX_DECISIONS]
    budget = SUMMARY_WORDS - sum(len(d.split()) for d in decisions)
    return Experience(session, time.time(), clip_words(summary, max(budget, 40)),
                      decisions), why
