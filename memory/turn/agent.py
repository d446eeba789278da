"""Agent: query -> backend.context -> llm -> backend.observe, every turn recorded."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.acting.toolloop import (
    MARGIN,
    MAX_STEPS,
    STEP_TOKENS,
    OnCall,
    Toolbox,
    combine,
    run_tools,
)
from memory.acting.tools.consent import ASKING, Asking
from memory.backends import Backend, BackendEnv, Registry, registry
from memory.llm.client import LLM, LLMError
from memory.transcript import TranscriptWriter
from memory.turn.answering import STRUCTURED, review_answer, stream_answer, structured_counts
from memory.turn.instructions import Instructions, Placed, sections
from memory.turn.steering import Steering, edit, forget, replay_op, segments
from memory.types import ContextPack, Section, Turn

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are engram, a coding assistant in a developer's terminal, talking about the git "
    "repository {repo}. Answer precisely and briefly. Follow the developer's latest "
    "decisions: when a requirement was revised, the newer one wins. When you write code, "
    "use the repository's own names and conventions shown below, and give complete code "
    "blocks."
)
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class AgentConfig:
    max_answer_tokens: int = 512
    system_prompt: str = SYSTEM_PROMPT
    max_tool_steps: int = MAX_STEPS  # model steps of a backend's tool loop per answer
    tool_share: float = 0.4  # of the backend's budget left to the calls of the repository tools
    budget_share: float = 1.0  # share of the window's budget the backend may fill (replay qa)
    answer_temperature: float | None = None  # None: the LLM's own (0); replay's samples > 0
    stop_repetition: bool = True  # end an answer's stream when it repeats itself


class Agent:
    """One conversation about one repository, with a switchable memory backend."""

    def __init__(self, backend: Backend, llm: LLM, env: BackendEnv,
                 transcript: TranscriptWriter | None = None, *,
                 config: AgentConfig | None = None, backends: Registry = registry) -> None:
        self.backend = backend
        self.llm = llm
        self.env = env
        self.transcript = transcript
        self.config = config or AgentConfig()
        self.backends = backends
        self.turns: list[Turn] = []
        self.last_pack: ContextPack | None = None
        # memory updates that were skipped or failed (``memory`` records, op skipped/error)
        self.memory_issues: list[dict[str, Any]] = []
        self.steering = Steering()  # the developer's pins (memory/turn/steering.py)
        self.user_ops: list[dict[str, Any]] = []  # their pin/unpin/forget/edit records
        self.tools: Toolbox | None = None  # repository tools (memory/acting/tools/), every turn
        # who else sees each tool call as it finishes, after its record (the app's live lines)
        self.watch_calls: OnCall | None = None
        # worked exchanges (chat messages) every context shows before the conversation:
        # memory/acting/workbench.py puts the edit format's example here
        self.examples: list[dict[str, str]] = []
        # the project's instruction files (memory/turn/instructions.py), pinned in every context
        self.root: Path | None = None  # the repository, when the index is not there yet
        self.focus: Callable[[], Iterable[str]] | None = None  # the open edits' paths
        self.placed = Placed()  # what the instructions took in the last context
        self._instructions: Instructions | None = None

    @property
    def repo(self) -> Any:
        return self.env.repo

    def record(self, record: dict[str, Any]) -> None:
        if self.transcript is not None:
            self.transcript.write(record)

    def start_session(self, session_id: str, version: str, head: str = "",
                      repo: str = "") -> None:
        """The session record; ``repo`` names the repository when the index is not built yet."""
        if repo and self.root is None:
            self.root = Path(repo)
        self.record({
            "type": "session", "id": session_id,
            "repo": repo or (str(self.repo.root) if self.repo is not None else ""),
            "head": head, "engram": version, "model": self.llm.model,
            "backend": self.backend.name, "started": time.time(),
        })

    def system_section(self) -> Section:
        repo = self.repo.root.name if self.repo is not None else "(no repository)"
        text = self.config.system_prompt.format(repo=repo)
        return Section("system", "system", text, self.llm.count_tokens(text))

    def example_sections(self) -> list[Section]:
        """``examples`` as history sections (source ``example:N``)."""
        return [Section("history", f"example:{n}", m["content"],
                        self.llm.count_tokens(m["content"]),
                        role="assistant" if m["role"] == "assistant" else "user")
                for n, m in enumerate(self.examples, 1)]

    def budget(self, system: Section, query: str, fixed: int = 0) -> int:
        """The tokens a backend may fill: the window less the answer, the system prompt,
        the query and ``fixed`` (the examples' tokens)."""
        window = self.llm.context_window()
        reserve = self.config.max_answer_tokens + MARGIN  # chat-template overhead
        free = max(0, window - reserve - system.tokens - fixed - self.llm.count_tokens(query))
        return int(free * min(1.0, max(0.0, self.config.budget_share)))

    async def context(self, query: str) -> ContextPack:
        """What the current backend would show the model for ``query`` (no side effects)."""
        return await self._pack(self.backend, query)

    def instructions(self) -> Instructions | None:
        """The loader of the repository's instruction files (None: no repository known)."""
        root = self.repo.root if self.repo is not None else self.root
        if root is None:
            return None
        if self._instructions is None or self._instructions.root != Path(root).resolve():
            self._instructions = Instructions(Path(root))
        return self._instructions

    def _instruction_sections(self, paths: Iterable[str]) -> list[Section]:
        loader = self.instructions()
        if loader is None:
            return []
        return sections(loader.applying(paths), self.llm.count_tokens)

    async def _pack(self, backend: Backend, query: str) -> ContextPack:
        """The system prompt, the project's instructions, what ``backend`` chose and the
        developer's pins. The instructions that apply to the repository root and the open
        edits are placed first, outside the backend's budget; those of the folders the
        backend's code sections cite then take their room from the backend's sections
        (the steering's drop order). No instruction is ever cut: when they pass the room,
        ``placed.over`` says by how much."""
        system, examples = self.system_section(), self.example_sections()
        room = self.budget(system, query, sum(e.tokens for e in examples))
        focus = [str(p) for p in (self.focus() if self.focus is not None else ())]
        pinned = self._instruction_sections(focus)
        budget = max(0, room - sum(s.tokens for s in pinned))
        if self.tools is not None:  # room for the calls' outputs
            budget = int(budget * (1.0 - min(1.0, max(0.0, self.config.tool_share))))
        pack = await backend.context(query, budget=budget)
        cited = [s.source for s in pack.sections if s.kind == "repo"]
        if cited:
            pinned = self._instruction_sections([*focus, *cited])
            budget = max(0, min(budget, room - sum(s.tokens for s in pinned)))
        self.steering.apply(pack, budget)
        pack.sections[:0] = [system, *pinned, *examples]
        loader = self.instructions()
        self.placed = Placed(tuple(s.source.removeprefix("instructions:") for s in pinned),
                             sum(s.tokens for s in pinned), room,
                             tuple(f"{f}: {why}" for f, why in
                                   (loader.problems.items() if loader else ())))
        return pack

    async def answer_with(self, backend: Backend, query: str,
                          on_token: Callable[[str], None] | None = None,
                          side: str = "") -> Turn:
        """Answer ``query`` through ``backend`` without changing any state; ``side``: which
        answer of an A/B it is (a consent asker names it).

        A failure comes back as a turn with ``error`` set (and any partial answer)."""
        asking = ASKING.set(Asking(backend.name, self.llm.model, side))
        try:
            return await self._answer_with(backend, query, on_token)
        finally:
            ASKING.reset(asking)

    async def _answer_with(self, backend: Backend, query: str,
                           on_token: Callable[[str], None] | None) -> Turn:
        before = self.llm.ledger.copy()
        calls_before = self.llm.stats.as_dict()
        started = time.time()
        turn = Turn(index=len(self.turns), user=query, backend=backend.name,
                    model=self.llm.model, started=started)
        try:
            pack = await self._pack(backend, query)
            self.last_pack = pack
            turn.context = pack.summary()
            if self.placed.files or self.placed.problems:
                turn.meta["instructions"] = self.placed.meta()
            await self._use_tools(backend, turn, pack)
            turn.assistant = await stream_answer(self.llm, self.config, pack, turn, on_token)
            await review_answer(self.llm, self.config, backend, turn, pack)
        except LLMError as exc:
            turn.assistant, turn.error = exc.partial, str(exc)
        except Exception as exc:  # a backend failing must not lose the user's query
            log.exception("building the context failed")
            turn.error = f"{type(exc).__name__}: {exc}"
        turn.finished = time.time()
        turn.latency_ms = int((turn.finished - started) * 1000)
        turn.usage = self.llm.ledger.since(before)
        counted = structured_counts(self.llm.stats.since(calls_before))
        if any(counted.values()):  # a backend's structured calls while answering
            turn.meta[STRUCTURED] = counted
        return turn

    async def _use_tools(self, backend: Backend, turn: Turn, pack: ContextPack) -> None:
        """Run the tool loop over the functions of a backend that offers them
        (``toolbox(query)``) and the repository tools (``self.tools``), within the window,
        under the backend's ``condenser()`` if it has one: the calls join ``pack``, each is
        a ``tool`` record when it ends, and ``turn.meta["tools"]`` notes them and what
        the model stopped seeing."""
        toolbox = getattr(backend, "toolbox", None)
        box = combine(toolbox(turn.user) if toolbox is not None else None, self.tools)
        if box is None:
            return
        condenser = getattr(backend, "condenser", None)

        def recorded(call: dict[str, Any]) -> None:
            self.record({"type": "tool", "turn": turn.index, "backend": backend.name, **call})
            if self.watch_calls is not None:
                with suppress(Exception):  # showing a call never breaks the turn
                    self.watch_calls(call)

        outcome = await run_tools(self.llm, box, pack, self.config.max_tool_steps,
                                  limit=self.tool_limit(),
                                  condenser=condenser() if condenser is not None else None,
                                  on_call=recorded)
        turn.meta["tools"] = outcome.meta()
        turn.context = pack.summary()

    def tool_limit(self) -> int:
        """The tokens a pack may hold during the tool loop: a step's reply and the answer
        must still fit the window."""
        reserve = max(self.config.max_answer_tokens, STEP_TOKENS) + MARGIN
        return max(0, self.llm.context_window() - reserve)

    async def commit(self, turn: Turn, observers: list[Backend] | None = None, *,
                     recorded: bool = False) -> None:
        """Record ``turn`` first (a crash during the memory update never loses it), then let
        the backends (default: the current one) observe it. The turn's meta counts the
        structured calls of its answer when recorded; after the update it also counts the
        update's calls, retries, lenient parses, failures and skips (``structured``), which
        the transcript holds as the memory records that follow the turn. ``recorded``: the
        transcript holds the turn already (an ingest taking up a turn whose memory update
        failed or was cut off): it is observed, not written again."""
        self.turns.append(turn)
        if not recorded:
            self.record(turn.to_record())
        calls_before = self.llm.stats.as_dict()
        issues_before = len(self.memory_issues)
        try:
            if turn.ok:
                for backend in observers or [self.backend]:
                    await self._observe(backend, [turn])
        finally:
            counted = structured_counts(self.llm.stats.since(calls_before),
                                        self.memory_issues[issues_before:])
            for key, value in (turn.meta.get(STRUCTURED) or {}).items():
                counted[key] = counted.get(key, 0) + int(value)
            turn.meta[STRUCTURED] = counted

    async def ask(self, query: str, *, commit: bool = True,
                  on_token: Callable[[str], None] | None = None) -> Turn:
        """Answer ``query``. With ``commit`` the turn is recorded and the backend observes it;
        without, no state anywhere changes. A failed answer comes back as a turn with
        ``error`` set (and, when committing, is recorded all the same)."""
        turn = await self.answer_with(self.backend, query, on_token)
        if commit:
            await self.commit(turn)
        return turn

    async def prepare(self, name: str, progress: Progress | None = None) -> Backend:
        """The current backend if it is ``name``, else a new one caught up on the turns."""
        if name == self.backend.name:
            return self.backend
        backend = self.backends.create(name, self.env)
        total = sum(1 for t in self.turns if t.ok)
        step = 16 if hasattr(backend, "observe_many") else 1  # per turn: visible progress
        seen = 0
        if progress is not None:
            progress(0, total)
        # the developer's forgets and edits of this backend's memories are applied again
        # after the turns they followed
        for turns, ops in segments(self.turns, self._ops_for(name)):
            done = [t for t in turns if t.ok]
            for start in range(0, len(done), step):
                await self._observe(backend, done[start:start + step])
                seen += len(done[start:start + step])
                if progress is not None:
                    progress(seen, total)
            await self._replay_ops(backend, ops)
        return backend

    def _ops_for(self, name: str) -> list[dict[str, Any]]:
        return [op for op in self.user_ops
                if op.get("op") in ("forget", "edit") and op.get("backend") == name]

    async def _replay_ops(self, backend: Backend, ops: list[dict[str, Any]]) -> None:
        for op in ops:
            problem = await replay_op(backend, op)
            if problem:
                log.warning("%s: %s", backend.name, problem)
                self.memory_issues.append({"type": "memory", "backend": backend.name,
                                           "op": "skipped", "id": str(op.get("id", "")),
                                           "text": problem,
                                           "turn": int(op.get("after", 0)) - 1})

    async def ab(self, query: str, backends: list[Backend],
                 on_tokens: list[Callable[[str], None] | None]) -> list[Turn]:
        """Answer ``query`` with each backend (nothing is committed yet)."""
        turns = []
        for side, backend, on_token in zip("AB", backends, on_tokens, strict=True):
            turns.append(await self.answer_with(backend, query, on_token, side))
        return turns

    async def choose(self, turns: list[Turn], choice: int, backends: list[Backend]) -> Turn:
        """Commit the chosen A/B answer; every backend involved (and the current one)
        observes it, and the comparison is recorded."""
        chosen = turns[choice]
        chosen.meta["ab"] = {"backends": [t.backend for t in turns],
                             "answers": [t.assistant for t in turns], "choice": choice}
        observers = list({id(b): b for b in [*backends, self.backend]}.values())
        await self.commit(chosen, observers)
        self.record({"type": "ab", "backends": [t.backend for t in turns],
                     "answers": [t.assistant for t in turns], "choice": choice,
                     "turn": chosen.index})
        return chosen

    # -- steering: the developer's pins, forgets and edits (memory/turn/steering.py) -----------
    def _steered(self, op: str, memory_id: str, text: str, **extra: Any) -> dict[str, Any]:
        record = {"type": "memory", "backend": self.backend.name, "op": op, "by": "user",
                  "id": memory_id, "text": text, **extra, "after": len(self.turns)}
        self.user_ops.append(record)
        self.record(record)
        return record

    def pin(self, kind: str, source: str, sections: list[Section]) -> None:
        """Include these sections in every next context (within the budget)."""
        self.steering.pin(kind, source, sections)
        self._steered("pin", source, "\n".join(s.text for s in sections), kind=kind)

    def unpin(self, source: str) -> bool:
        if not self.steering.unpin(source):
            return False
        self._steered("unpin", source, "")
        return True

    async def forget(self, memory_id: str) -> str:
        """Delete a memory of the current backend (SteeringUnsupported if it cannot)."""
        text = await forget(self.backend, memory_id)
        self.steering.unpin(memory_id)
        self._steered("forget", memory_id, text)
        return text

    async def edit(self, memory_id: str, text: str) -> str:
        """Replace a memory's text in the current backend; returns the old text."""
        old = await edit(self.backend, memory_id, text)
        self.steering.edited(memory_id, text.strip(), self.llm.count_tokens)
        self._steered("edit", memory_id, text.strip(), old=old)
        return old

    async def end_session(self) -> None:
        """Let the backend keep what this session leaves for the next ones (``remember``:
        cards' session summary); a failure is logged and recorded, never raised."""
        remember = getattr(self.backend, "remember", None)
        if remember is None or not any(t.ok for t in self.turns):
            return
        try:
            await remember()
        except Exception as exc:  # the session is over either way
            log.warning("%s could not keep this session: %s", self.backend.name, exc)
            self.record({"type": "memory", "backend": self.backend.name, "op": "error",
                         "id": "", "text": f"{type(exc).__name__}: {exc}"})
        drain = getattr(self.backend, "drain_records", None)
        for record in drain() if drain is not None else []:
            self.record(record)

    async def _observe(self, backend: Backend, turns: list[Turn]) -> None:
        """Let ``backend`` learn from ``turns``; a failure is logged and recorded, never raised."""
        write = self.record
        try:
            many = getattr(backend, "observe_many", None)
            if many is not None:
                await many(turns)
            else:
                for turn in turns:
                    await backend.observe(turn)
        except Exception as exc:
            log.warning("memory update of %s failed: %s", backend.name, exc)
            failed = {"type": "memory", "backend": backend.name, "op": "error",
                      "id": "", "text": f"{type(exc).__name__}: {exc}"}
            write(failed)
            self.memory_issues.append({**failed, "turn": turns[-1].index if turns else -1})
        drain = getattr(backend, "drain_records", None)
        for record in drain() if drain is not None else []:
            write(record)
            if record.get("type") == "memory" and record.get("op") in ("skipped", "error"):
                self.memory_issues.append({**record, "turn": turns[-1].index if turns else -1})

    async def switch(self, name: str, progress: Progress | None = None) -> Backend:
        """Replace the backend by ``name``, caught up on every successful turn so far."""
        if name == self.backend.name:
            return self.backend
        backend = await self.prepare(name, progress)
        self.record({"type": "switch", "from": self.backend.name, "to": name,
                     "turn": len(self.turns)})
        self.backend = backend
        return backend

    async def resume(self, turns: list[Turn], steering: list[dict[str, Any]] | None = None
                     ) -> None:
        """Continue a recorded session: its turns become history, the backend catches up
        (a persistent backend, whose store already holds them, does not), the developer's
        recorded pins come back and their forgets and edits are applied again after the
        turns they followed."""
        self.turns.extend(turns)
        self.user_ops = list(steering or [])
        self.steering.restore(self.user_ops, self.turns, self.llm.count_tokens)
        if getattr(self.backend, "persistent", False):
            return
        for part, ops in segments(turns, self._ops_for(self.backend.name)):
            await self._observe(self.backend, [t for t in part if t.ok])
            await self._replay_ops(self.backend, ops)
