"""``compact``: what coding agents do by default — summarise the older turns when full.

When the history (running summary + verbatim turns) passes a share of the model's
window (default 0.8), or holds more verbatim turns than a turn-count trigger (off by
default; for small replays), the turns between the first one(s) and the recent tail
are folded by the LLM into one running summary. The head and the tail stay verbatim,
as in OpenHands' LLMSummarizingCondenser (``keep_first``; after a condensation the
view is cut to half its trigger size: ``max_size // 2 - keep_first - 1`` events of
tail). The previous summary is part of the next summary's input (a rolling,
recursive summary, as Aider and OpenHands do). ``compact(guidance)`` forces one with
the developer's extra instructions (Claude Code's and Codex's ``/compact``).

Tool calls (memory/acting/toolloop.py, memory/acting/tools/) are part of the turns: a past turn's
calls are shown with their outputs cut to ``TRAIL_CHARS`` and folded into the summary
with the turn. Within a long turn (``condenser()``, asked after every call) the outputs
are compacted as agents do: when the calls pass the share of the room the window
leaves, every call but the newest is folded by the LLM into the turn's notes on its
calls (their outputs no longer shown). What a compaction dropped is recorded: the
``SUMMARIZE`` memory record lists each folded turn and what it held (``dropped``; the
last one is also ``last_compaction``, for the inspector), and, within a turn, events in
the turn's ``tools.dropped`` say which calls were folded.

Options (``BackendEnv.options``): ``compact_share`` (0.8), ``compact_turns`` (0: off),
``compact_keep_first`` (1 turn), ``compact_summary_tokens`` (512).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory.acting.toolloop import MARGIN, told
from memory.acting.tools.trajectory import (
    CLIPPED,
    MASKED,
    SUMMARISED,
    WHOLE,
    Call,
    Count,
    Trajectory,
    trail,
)
from memory.backends._journal import Journal
from memory.backends.base import (
    BackendEnv,
    Digest,
    newest_that_fit,
    repo_sections,
    split_budget,
    turn_sections,
)
from memory.backends.mem0 import statements
from memory.llm.client import LLM, LLMError
from memory.types import ContextPack, Section, Turn

SHARE = 0.8  # of the window: the history size that triggers a compaction
KEEP_FIRST = 1  # turns kept verbatim at the start (OpenHands keeps its first events)
SUMMARY_TOKENS = 512
PROMPT_SHARE = 0.6  # of the window, at most, for the turns shown to the summariser
CHARS_PER_TOKEN = 3
TRAIL_CHARS = 1500  # of each tool output of a past turn shown verbatim
MIN_CHARS = 60  # of each text a summariser is shown, at least
NOTES_CHARS = 2400  # the notes on a turn's folded calls

SUMMARY_PROMPT = """You maintain the running summary of a long conversation between a
developer and a coding assistant about one repository. The older turns are being
removed from the assistant's view; your summary is all that will remain of them.
Fold the previous summary and the turns below into one new summary. Keep, each tied
to the files and functions it concerns:
- Requirements: what the developer asked for, with exact names, values and constraints.
- Decisions and conventions agreed on.
- Revisions: requirements that changed; give only the latest version and say it replaced
  the older one.
- Open errors: failures, tracebacks or bugs not yet resolved.
- Code written: which functions or classes were written or changed, where, and what they do.
Drop greetings and anything later turns made obsolete. Answer with short lines under
those five headings (a list for each; an empty list when a heading has nothing)."""

HEADINGS = {"requirements": "Requirements", "decisions": "Decisions",
            "revisions": "Revisions", "open_errors": "Open errors",
            "code_written": "Code written"}
MAX_LINES = 8  # per heading, under constrained decoding


def summary_schema(choices: list[str] | None) -> dict[str, Any]:
    """Five lists of lines: free lines, or (constrained decoding) lines chosen among
    the previous summary's and the folded turns' own sentences."""
    lines: dict[str, Any]
    if choices is None:
        lines = {"type": "array", "items": {"type": "string", "minLength": 3}}
    elif choices:
        lines = {"type": "array", "maxItems": min(MAX_LINES, len(choices)),
                 "items": {"type": "string", "enum": choices}}
    else:
        lines = {"type": "array", "maxItems": 0, "items": {"type": "string"}}
    return {"type": "object", "properties": {key: lines for key in HEADINGS},
            "required": list(HEADINGS), "additionalProperties": False}


def render_summary(data: dict[str, Any]) -> str:
    """The structured summary as the text the model sees: headings with bullet lines."""
    blocks = []
    for key, title in HEADINGS.items():
        lines = [str(line).strip() for line in data.get(key) or [] if str(line).strip()]
        if lines:
            blocks.append(f"{title}:\n" + "\n".join(f"- {line}" for line in lines))
    return "\n".join(blocks)


def summary_lines(summary: str) -> list[str]:
    """The bullet lines of a rendered summary."""
    return [line[2:].strip() for line in summary.splitlines() if line.startswith("- ")]


@dataclass(frozen=True)
class CompactConfig:
    share: float = SHARE
    turns: int = 0  # compact when more verbatim turns than this (0: only the share trigger)
    keep_first: int = KEEP_FIRST
    summary_tokens: int = SUMMARY_TOKENS

    @classmethod
    def from_options(cls, options: dict[str, object]) -> CompactConfig:
        return cls(share=float(options.get("compact_share", SHARE)),  # type: ignore[arg-type]
                   turns=int(options.get("compact_turns", 0)),  # type: ignore[call-overload]
                   keep_first=int(options.get("compact_keep_first", KEEP_FIRST)),  # type: ignore[call-overload]
                   summary_tokens=int(options.get("compact_summary_tokens",  # type: ignore[call-overload]
                                                  SUMMARY_TOKENS)))


CALLS_PROMPT = """You keep a coding assistant's notes on the tool calls it made while
answering one question. The outputs of its older calls are being removed from its view;
your notes are all that will remain of them. Fold the previous notes and the calls below
into new notes: for each call, what it looked for and what it found that matters for the
question (file paths, line numbers, names, values, errors, test results). Short lines;
leave out what does not matter."""


def clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars] + " [...]"


def render_calls(calls: list[Call], chars: int) -> str:
    lines = []
    for call in calls:
        status = "" if call.ok else " (failed)"
        lines.append(f"Function call {call.line}{status} returned:\n{clip(call.output, chars)}")
    return "\n\n".join(lines)


def request_tokens(llm: LLM, system: str, user: str, schema: dict[str, Any]) -> int:
    """The tokens of a structured call's request as sent: the schema is added to the
    system prompt in words in the modes that tell it (``memory.acting.toolloop.told``)."""
    return llm.count_messages([{"role": "system", "content": system + told(llm, schema)},
                               {"role": "user", "content": user}])


def fitted(llm: LLM, system: str, schema: dict[str, Any], render: Callable[[int], str],
           chars: int, reply: int) -> str | None:
    """The summariser's message with each text cut to ``chars`` characters, or fewer, so
    that the request and its ``reply`` fit the window (measured with the model's own
    token counter: code takes more tokens per character than the estimate); None when
    not even ``MIN_CHARS`` fit."""
    limit = llm.context_window() - reply - MARGIN
    for _ in range(8):
        user = render(chars)
        sent = request_tokens(llm, system, user, schema)
        if sent <= limit:
            return user
        if chars <= MIN_CHARS:
            return None
        chars = max(MIN_CHARS, int(chars * limit / sent * 0.9))
    return None


def render_turn(turn: Turn, chars: int) -> str:
    calls = trail(turn)
    tools = f"\nTool calls:\n{render_calls(calls, chars)}" if calls else ""
    return (f"[turn {turn.index}]\nDeveloper: {clip(turn.user, chars)}{tools}\n"
            f"Assistant: {clip(turn.assistant, chars)}")


def past_sections(turn: Turn, count: Count) -> list[Section]:
    """A past turn as the model sees it: its question, its calls (outputs cut to
    ``TRAIL_CHARS``), its answer."""
    user, answer = turn_sections(turn, count)
    calls = trail(turn)
    if not calls:
        return [user, answer]
    text = "Tool calls of this turn:\n" + render_calls(calls, TRAIL_CHARS)
    return [user, Section("history", user.source, text, count(text), role="assistant"),
            answer]


def dropped_text(turn: Turn) -> str:
    """What folding a turn into the summary took out of view."""
    calls = trail(turn)
    said = f"Developer: {clip(turn.user, 200)} | Assistant: {clip(turn.assistant, 200)}"
    if not calls:
        return said
    outputs = sum(len(c.output) for c in calls)
    return (f"{said} | {len(calls)} tool calls ({outputs} characters of output): "
            + "; ".join(clip(c.line, 120) for c in calls))


class SummariseCalls:
    """Within a long turn: past ``share`` of the room, every call but the newest
    ``keep_last`` is folded by the LLM into the turn's notes on its calls."""

    name = "compact"

    def __init__(self, llm: LLM, share: float, keep_last: int = 1,
                 tokens: int = SUMMARY_TOKENS) -> None:
        self.llm, self.share, self.keep_last, self.tokens = llm, share, keep_last, tokens

    async def condense(self, trajectory: Trajectory, room: int, count: Count) -> None:
        if trajectory.tokens(count) <= room * self.share:
            return
        shown = [s for s in trajectory.steps if s.state in (WHOLE, CLIPPED, MASKED)]
        fold = shown[:max(0, len(shown) - self.keep_last)]
        if not fold:
            return
        chars = max(200, int(self.llm.context_window() * PROMPT_SHARE) * CHARS_PER_TOKEN
                    // (2 * len(fold)))
        calls = [Call(s.function, s.args, s.ok, s.output) for s in fold]
        schema = {"type": "object", "properties": {"notes": {
            "type": "string", "minLength": 1, "maxLength": NOTES_CHARS}},
            "required": ["notes"], "additionalProperties": False}
        user = fitted(self.llm, CALLS_PROMPT, schema, lambda n: (
            f"Previous notes:\n{trajectory.summary or '(none yet)'}\n\n"
            f"Calls to fold in:\n{render_calls(calls, n)}\n\nNew notes:"), chars, self.tokens)
        if user is None:
            return  # not even short extracts fit: the window's own fit masks them
        try:
            data = await self.llm.ask_json(CALLS_PROMPT, user, schema, name="call_notes",
                                           max_tokens=self.tokens)
        except LLMError:
            return  # the window's own fit masks them instead (and records it)
        notes = str((data or {}).get("notes", "")).strip() if isinstance(data, dict) else ""
        if not notes:
            return
        trajectory.summary = notes
        for step in fold:
            before = count(step.render())
            step.state = SUMMARISED
            trajectory.note(step, SUMMARISED, self.name, before, 0,
                            notes if step is fold[-1] else "")


class CompactBackend:
    name = "compact"

    def __init__(self, env: BackendEnv, config: CompactConfig | None = None) -> None:
        self.env = env
        self.config = config or CompactConfig.from_options(env.options)
        self.head: list[Turn] = []  # the first turns, always verbatim
        self.tail: list[Turn] = []  # verbatim turns after the head not yet summarised
        self.summary = ""  # the running summary of the turns in between
        self.summarized: list[int] = []  # indices of the turns the summary stands for
        self.compactions = 0
        # the last compaction: after which turn, its summary and what it replaced
        self.last_compaction: dict[str, Any] | None = None
        self.journal = Journal(self.name)
        self._sections: dict[int, list[Section]] = {}
        self._digest = Digest()

    # -- state ----------------------------------------------------------------------
    def _tokens(self, turns: list[Turn]) -> int:
        return sum(s.tokens for t in turns for s in self._sections[t.index])

    def history_tokens(self) -> int:
        return self.env.count(self.summary) + self._tokens(self.head) + self._tokens(self.tail)

    def threshold(self) -> int:
        return int(self.env.llm.context_window() * self.config.share)

    def due(self) -> bool:
        """Whether the history passed a trigger (share of the window, or turn count)."""
        turns = len(self.head) + len(self.tail)
        if self.config.turns > 0 and turns > self.config.turns:
            return True
        return self.history_tokens() > self.threshold()

    def tail_size(self) -> int:
        """How many recent turns stay verbatim after a triggered compaction."""
        if self.config.turns > 0 and len(self.head) + len(self.tail) > self.config.turns:
            return max(1, self.config.turns // 2 - self.config.keep_first - 1)
        kept, used = 0, 0
        for turn in reversed(self.tail):  # newest turns within half the trigger size
            used += self._tokens([turn])
            if used > self.threshold() // 2 and kept:
                break
            kept += 1
        return max(1, kept)

    # -- observe ----------------------------------------------------------------------
    async def observe(self, turn: Turn) -> None:
        self._sections[turn.index] = past_sections(turn, self.env.count)
        if len(self.head) < self.config.keep_first and not self.summarized:
            self.head.append(turn)
        else:
            self.tail.append(turn)
        self._digest.update("turn", turn.index, turn.user, turn.assistant)
        if self.due():
            await self._compact(self.tail_size(), "")

    async def compact(self, guidance: str = "") -> bool:
        """Force a compaction now (``/compact [guidance]``): every turn after the head but
        the newest is folded into the summary, following the developer's ``guidance``.
        Returns whether the summary changed."""
        return await self._compact(1, guidance.strip())

    async def _compact(self, keep: int, guidance: str) -> bool:
        middle = self.tail[:-keep] if keep else list(self.tail)
        if not middle:
            return False
        try:
            summary = await self._summarize(middle, guidance)
        except LLMError as exc:
            self.journal.skip(f"compaction of turns {middle[0].index}-{middle[-1].index} "
                              f"skipped (turns kept verbatim): {exc}")
            return False
        if not summary:
            self.journal.skip(f"compaction of turns {middle[0].index}-{middle[-1].index} "
                              "skipped: the summary came back empty (turns kept verbatim)")
            return False
        self.summary = summary
        self.summarized += [t.index for t in middle]
        self.tail = self.tail[len(middle):]
        for turn in middle:
            self._sections.pop(turn.index, None)
        self.compactions += 1
        self._digest.update("compact", summary, *[t.index for t in middle])
        dropped = [{"turn": t.index, "text": dropped_text(t)} for t in middle]
        self.journal.op("SUMMARIZE", f"summary:{self.summarized[0]}-{self.summarized[-1]}",
                        summary, dropped=dropped)
        newest = max(t.index for t in [*self.head, *self.tail, *middle])
        self.last_compaction = {"after": newest, "summary": summary, "dropped": dropped,
                                "turns": [self.summarized[0], self.summarized[-1]]}
        return True

    def condenser(self) -> SummariseCalls:
        return SummariseCalls(self.env.llm, self.config.share,
                              tokens=self.config.summary_tokens)

    async def _summarize(self, middle: list[Turn], guidance: str) -> str:
        room = int(self.env.llm.context_window() * PROMPT_SHARE) - self.env.count(self.summary)
        chars = max(200, room * CHARS_PER_TOKEN // (2 * len(middle)))

        def parts(n: int) -> str:
            said = [f"Previous summary:\n{self.summary or '(none yet)'}",
                    "Turns to fold in:\n" + "\n\n".join(render_turn(t, n) for t in middle)]
            if guidance:
                said.append(f"The developer's instructions for this summary: {guidance}")
            return "\n\n".join([*said, "New summary:"])

        choices = None
        if self.env.llm.constrained():  # a small model picks lines, it does not write them
            found = summary_lines(self.summary)
            for turn in middle:
                found += statements(turn.user) + statements(turn.assistant)
            choices = list(dict.fromkeys(found))
        schema = summary_schema(choices)
        user = fitted(self.env.llm, SUMMARY_PROMPT, schema, parts, chars,
                      self.config.summary_tokens)
        if user is None:
            raise LLMError("the turns do not fit the window even cut short")
        data = await self.env.llm.ask_json(SUMMARY_PROMPT, user, schema, name="summary",
                                           max_tokens=self.config.summary_tokens)
        return render_summary(data if isinstance(data, dict) else {})

    def drain_records(self) -> list[dict[str, object]]:
        return self.journal.drain()  # type: ignore[return-value]

    # -- context ----------------------------------------------------------------------
    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        left = budget - sum(s.tokens for s in repo)
        sections: list[Section] = []
        if self.summary:
            text = f"Summary of turns {self.summarized[0]}-{self.summarized[-1]}:\n{self.summary}"
            tokens = self.env.count(text)
            if tokens <= left:
                sections.append(Section("memory", "summary", text, tokens))
                left -= tokens
        head = newest_that_fit([self._sections[t.index] for t in self.head], left)
        left -= sum(s.tokens for s in head)
        tail = newest_that_fit([self._sections[t.index] for t in self.tail], left)
        return ContextPack(query, [*sections, *head, *tail, *repo], self.env.count(query))

    def state_digest(self) -> str:
        return self._digest.value
