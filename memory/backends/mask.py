"""``mask``: observation masking — the cheap alternative to LLM summaries.

Every past turn stays in the history, but in turns older than the last N (option
``mask_keep``, default 10, the observation window of Lindenbauer et al., 2025, "The
Complexity Trap", who found masking as good as LLM summarisation at about half the
cost) code blocks and tool-like outputs (fenced blocks, tracebacks) are replaced by a
one-line placeholder naming what was there. The prose around them is kept as it was.
No LLM. Over the window, the oldest turns are dropped whole (as ``full``).

Tool outputs (memory/acting/toolloop.py, memory/acting/tools/) are masked as the paper's agents mask
observations: only the newest ``mask_observations`` outputs (default 4: an engram turn
holds a few calls, and a small model's window is a few thousand tokens) are shown whole;
every older one is replaced by a placeholder naming its size and last line, its call
kept. That holds within a long turn (``condenser()``: the tool loop asks it after each
call) and across turns (the calls of past turns, newest first). An output leaving the
window across turns is a ``MASK`` memory record (and, for the newest turn,
``last_masked``, which the inspector shows); within a turn, an event in the turn's
``tools.dropped``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.acting.tools.trajectory import (
    MASKED,
    WHOLE,
    Call,
    Count,
    Trajectory,
    placeholder,
    trail,
)
from memory.backends._journal import Journal
from memory.backends.base import (
    BackendEnv,
    Digest,
    newest_that_fit,
    repo_sections,
    split_budget,
)
from memory.listing import listed
from memory.types import ContextPack, Section, Turn

KEEP = 10  # most recent turns shown unmasked
OBSERVATIONS = 4  # most recent tool outputs shown whole

OUTPUT_LANGS = {"", "text", "txt", "console", "shell-session", "output", "log", "pytb",
                "stdout", "stderr", "bash", "sh", "shell", "zsh", "terminal"}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[^\n`]*)\n"
                    r"(?P<body>.*?)(?:^(?P=indent)(?P=fence)[ \t]*$|\Z)", re.M | re.S)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\n(?:[ \t]+.*\n?|\n)*"
                        r"(?P<last>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)"
                        r"\b[^\n]*)?", re.M)
_DEFINES = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.M)
_PROMPT_LINE = re.compile(r"^(?:\$|>>>|PS>|#) ", re.M)
MAX_NAMES = 4


@dataclass(frozen=True)
class Masked:
    """One replaced block: its kind (``code`` or ``output``) and its placeholder."""

    kind: str
    placeholder: str


def _names(body: str) -> str:
    names = list(dict.fromkeys(_DEFINES.findall(body)))
    if not names:
        return ""
    return "; defines " + listed(names, MAX_NAMES)


def _last_line(body: str, limit: int = 80) -> str:
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    if not lines:
        return ""
    last = lines[-1] if len(lines[-1]) <= limit else lines[-1][:limit] + "..."
    return f"; last line: {last}"


def describe_block(lang: str, body: str) -> Masked:
    """The placeholder for one fenced block."""
    lang = lang.strip().split()[0].lower() if lang.strip() else ""
    lines = len(body.rstrip("\n").splitlines())
    looks_like_output = (lang in OUTPUT_LANGS and not _DEFINES.search(body)) or \
        bool(_PROMPT_LINE.match(body)) or body.startswith("Traceback")
    if looks_like_output:
        what = f"{lang} output" if lang else "output"
        return Masked("output", f"[{what} omitted: {lines} lines{_last_line(body)}]")
    what = f"{lang} code" if lang else "code"
    return Masked("code", f"[{what} block omitted: {lines} lines{_names(body)}]")


def mask_text(text: str) -> tuple[str, list[Masked]]:
    """``text`` with its code blocks and tool-like outputs replaced by placeholders."""
    found: list[Masked] = []

    def fenced(match: re.Match[str]) -> str:
        masked = describe_block(match["lang"], match["body"])
        found.append(masked)
        return match["indent"] + masked.placeholder

    def traceback(match: re.Match[str]) -> str:
        error = match["last"] or "no exception line"
        masked = Masked("output", f"[traceback omitted: {error.strip()}]")
        found.append(masked)
        return masked.placeholder + ("\n" if match.group(0).endswith("\n") else "")

    text = _FENCE.sub(fenced, text)
    text = _TRACEBACK.sub(traceback, text)
    return text, found


@dataclass
class _Past:
    """A turn's sections as shown verbatim and as shown masked."""

    index: int
    plain: list[Section]
    masked: list[Section]
    blocks: int
    calls: list[Call]


def trail_text(calls: list[Call], whole: int) -> str:
    """A past turn's calls, the last ``whole`` outputs shown, the others masked."""
    parts = []
    for i, call in enumerate(calls):
        status = "" if call.ok else " (failed)"
        shown = call.output if i >= len(calls) - whole else \
            placeholder(call.function, call.output, call.ok)
        parts.append(f"Function call {call.line}{status} returned:\n{shown}")
    return "Tool calls of this turn:\n" + "\n\n".join(parts)


class MaskObservations:
    """Within a long turn: outputs older than the newest ``keep`` are masked."""

    name = "mask"

    def __init__(self, keep: int) -> None:
        self.keep = keep

    async def condense(self, trajectory: Trajectory, room: int, count: Count) -> None:
        whole = [s for s in trajectory.steps if s.state == WHOLE]
        for step in whole[:max(0, len(whole) - self.keep)]:
            before = count(step.render())
            text = step.mask()
            trajectory.note(step, MASKED, self.name, before, count(step.render()), text)


class MaskBackend:
    name = "mask"

    def __init__(self, env: BackendEnv, keep: int = KEEP) -> None:
        self.env = env
        self.keep = int(env.options.get("mask_keep", keep))  # type: ignore[call-overload]
        self.observations = int(env.options.get("mask_observations",  # type: ignore[call-overload]
                                                OBSERVATIONS))
        self._turns: list[_Past] = []
        self._trails: dict[tuple[int, int], Section] = {}  # (turn, outputs shown): section
        # the outputs of past turns masked when the newest turn was observed (inspector)
        self.last_masked: list[dict[str, object]] = []
        self.masked_at = -1  # the index of that turn
        self.journal = Journal(self.name)
        self._digest = Digest()

    def condenser(self) -> MaskObservations:
        return MaskObservations(self.observations)

    def drain_records(self) -> list[dict[str, object]]:
        return self.journal.drain()  # type: ignore[return-value]

    async def observe(self, turn: Turn) -> None:
        await self.observe_many([turn])

    async def observe_many(self, turns: list[Turn]) -> None:
        for turn in turns:
            self.last_masked, self.masked_at = [], turn.index
            before = self.whole_outputs()
            self._turns.append(self._past(turn))
            # the new turn's outputs count as shown: each one history masks is recorded
            before.append(len(self._turns[-1].calls))
            self._digest.update(turn.index, turn.user, turn.assistant,
                                *(c.line for c in self._turns[-1].calls))
            after = self.whole_outputs()
            for position, shown in enumerate(before):
                past = self._turns[position]
                end = len(past.calls)
                for call in past.calls[end - shown:end - after[position]]:
                    hidden = placeholder(call.function, call.output, call.ok)
                    self.journal.op("MASK", f"turn:{past.index}:{call.function}",
                                    f"{call.line} -> {hidden}")
                    self.last_masked.append({"turn": past.index, "call": call.line,
                                             "chars": len(call.output), "text": hidden})

    def whole_outputs(self, observations: int | None = None) -> list[int]:
        """How many of each past turn's tool outputs are shown whole: the newest
        ``observations`` across the turns."""
        left = max(0, self.observations if observations is None else observations)
        shown = [0] * len(self._turns)
        for position in range(len(self._turns) - 1, -1, -1):
            take = min(left, len(self._turns[position].calls))
            shown[position], left = take, left - take
        return shown

    def _past(self, turn: Turn) -> _Past:
        source = f"turn:{turn.index}"
        plain, masked, blocks = [], [], 0
        for role, text in (("user", turn.user), ("assistant", turn.assistant)):
            plain.append(Section("history", source, text, self.env.count(text),
                                 role=role))  # type: ignore[arg-type]
            hidden, found = mask_text(text)
            blocks += len(found)
            tokens = plain[-1].tokens if not found else self.env.count(hidden)
            masked.append(Section("history", source, hidden, tokens,
                                  role=role))  # type: ignore[arg-type]
        return _Past(turn.index, plain, masked, blocks, trail(turn))

    def _trail(self, past: _Past, whole: int) -> Section:
        key = (past.index, whole)
        if key not in self._trails:
            text = trail_text(past.calls, whole)
            self._trails[key] = Section("history", f"turn:{past.index}", text,
                                        self.env.count(text), role="assistant")
        return self._trails[key]

    def view(self, observations: int | None = None) -> list[list[Section]]:
        """Each past turn as the model sees it: masked unless among the last ``keep``,
        its tool calls with the newest ``observations`` outputs whole, the older masked."""
        cut = max(0, len(self._turns) - self.keep)
        whole = self.whole_outputs(observations)
        groups = []
        for i, past in enumerate(self._turns):
            user, answer = past.masked if i < cut else past.plain
            calls = [self._trail(past, whole[i])] if past.calls else []
            groups.append([user, *calls, answer])
        return groups

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        history = self.history(budget - sum(s.tokens for s in repo))
        return ContextPack(query, [*history, *repo], self.env.count(query))

    def history(self, room: int) -> list[Section]:
        """The newest turns that fit ``room``. When long tool outputs would push turns
        out, fewer outputs are shown whole: the most turns kept, then the most outputs."""
        best: tuple[int, list[Section]] | None = None
        for observations in range(max(0, self.observations), -1, -1):
            history = newest_that_fit(self.view(observations), room)
            kept = len({s.source for s in history})
            if best is None or kept > best[0]:
                best = (kept, history)
            if kept == len(self._turns) or not any(p.calls for p in self._turns):
                break
        return best[1] if best is not None else []

    def state_digest(self) -> str:
        return self._digest.value
