"""``mask``: observation masking — the cheap alternative to LLM summaries.

Every past turn stays in the history, but in turns older than the last N (option
``mask_keep``, default 10, the observation window of Lindenbauer et al., 2025, "The
Complexity Trap", who found masking as good as LLM summarisation at about half the
cost) code blocks and tool-like outputs (fenced blocks, tracebacks) are replaced by a
one-line placeholder naming what was there. The prose around them is kept as it was.
No LLM. Over the window, the oldest turns are dropped whole (as ``full``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.backends.base import (
    BackendEnv,
    Digest,
    newest_that_fit,
    repo_sections,
    split_budget,
)
from memory.types import ContextPack, Section, Turn

KEEP = 10  # most recent turns shown unmasked

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
    more = f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
    return "; defines " + ", ".join(names[:MAX_NAMES]) + more


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


class MaskBackend:
    name = "mask"

    def __init__(self, env: BackendEnv, keep: int = KEEP) -> None:
        self.env = env
        self.keep = int(env.options.get("mask_keep", keep))  # type: ignore[call-overload]
        self._turns: list[_Past] = []
        self._digest = Digest()

    async def observe(self, turn: Turn) -> None:
        await self.observe_many([turn])

    async def observe_many(self, turns: list[Turn]) -> None:
        for turn in turns:
            self._turns.append(self._past(turn))
            self._digest.update(turn.index, turn.user, turn.assistant)

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
        return _Past(turn.index, plain, masked, blocks)

    def view(self) -> list[list[Section]]:
        """Each past turn as the model sees it: masked unless among the last ``keep``."""
        cut = max(0, len(self._turns) - self.keep)
        return [p.masked if i < cut else p.plain for i, p in enumerate(self._turns)]

    async def context(self, query: str, *, budget: int) -> ContextPack:
        repo = repo_sections(self.env, query, split_budget(budget))
        history = newest_that_fit(self.view(), budget - sum(s.tokens for s in repo))
        return ContextPack(query, [*history, *repo], self.env.count(query))

    def state_digest(self) -> str:
        return self._digest.value
