"""``codemem``: CodeMem's two memories, guided by the AST.

Code Context Memory (repository code). At the start of a round the LLM sees the
instructions so far and only the keys of the blocks in memory, and answers ADD or
KEEP; ADD merges the next BM25 hits for the instruction. After the round the AST
selector keeps the blocks whose APIs meet the external calls of the generated code
(a round without code keeps the memory as it is).

Code Session Memory (the code the assistant wrote). Each answer with code for a
function becomes a block {instruction, code, AST diff, note}. The context holds the
latest block of each relevant function, its linked blocks, and a note on what the
current instruction changes. After generation (``review``) the AST detector looks
for diffs undoing earlier, differently-instructed blocks; a conflict gets one
regeneration with those blocks shown.

All of CodeMem's own calls run at temperature 0 and count as ``memory`` usage;
the regeneration is an answer. ``context`` and ``review`` change no state.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.backends.base import BackendEnv, Digest, render_chunk
from memory.backends.codemem.context import CodeBlock, retrieve_new, select
from memory.backends.codemem.session import Conflict, Draft, SessionBlock, SessionMemory
from memory.backends.codemem.syntax import code_blocks, external_calls
from memory.fences import fenced
from memory.listing import listed
from memory.llm.client import LLMError
from memory.llm.lenient_json import MalformedJSON
from memory.turn.steering import MemoryItem, SteeringUnsupported
from memory.types import ContextPack, Section, Turn

log = logging.getLogger(__name__)

SESSION_SHARE = 0.4  # of the budget, for the code session memory
INSTRUCTION_SHARE = 0.15  # for the instructions so far
NOTED_FUNCTIONS = 2  # modification notes asked per round, at most

JUDGE_PROMPT = """You manage the code context of a coding assistant working in a git repository.
The memory holds code blocks from the repository; you see only their keys
(signatures and docstrings, or class signatures with attributes and methods).
Given the developer's instructions so far, decide whether the memory already holds
the repository code the current instruction needs.
- KEEP: the blocks in memory are enough.
- ADD: code that is not in memory is needed; name the functions or classes to look for.

Answer with JSON: {"decision": "ADD", "targets": ["function or class name"]} when code
is missing, or {"decision": "KEEP", "targets": []} when the memory is enough."""
# {"decision": "ADD" | "KEEP", "targets": ["name", ...]}
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decision": {"type": "string", "enum": ["ADD", "KEEP"]},
                   # names, not prose: a pattern (a bounded length makes a grammar slow)
                   "targets": {"type": "array", "maxItems": 5,
                               "items": {"type": "string",
                                         "pattern": "^[A-Za-z_][A-Za-z0-9_.]*$"}}},
    "required": ["decision", "targets"], "additionalProperties": False,
}

MODIFY_PROMPT = """You help a coding assistant continue its work on one function.
You get the latest version of the function and the developer's new instruction.
In one sentence, say what has to change in the function to follow the instruction
(or that nothing has to change). Answer with that sentence only."""

SUMMARY_PROMPT = """You keep the change log of a function a coding assistant is writing.
You get the instruction, and the statements the change added and removed.
In one sentence, summarise what the change did. Answer with that sentence only."""

REGENERATE = """Your code for `{function}` undoes changes made earlier for other instructions:
{conflicts}
Rewrite your answer so that it follows the current instruction without undoing those
earlier changes, unless the current instruction asks for exactly that. Give the complete code."""


@dataclass
class Proposal:
    """The ADD/KEEP decision of a round, made in ``context`` and applied in ``observe``."""

    decision: str  # ADD | KEEP
    targets: list[str] = field(default_factory=list)
    added: list[CodeBlock] = field(default_factory=list)
    reason: str = ""


def _lines(statements: tuple[str, ...], limit: int = 3) -> str:
    return listed([f"`{s[:120]}`" for s in statements], limit)


class CodeMemBackend:
    name = "codemem"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self.context_memory: dict[str, CodeBlock] = {}  # location -> block, oldest first
        self.session = SessionMemory()
        self.instructions: list[str] = []
        self.last_events: list[tuple[str, str]] = []  # (op, what) of the last observed turn
        self._digest = Digest()
        self._proposal: tuple[str, str, Proposal] | None = None  # (query, digest, proposal)
        self._pending: list[dict[str, Any]] = []

    # -- LLM calls -------------------------------------------------------------------
    async def _ask(self, system: str, user: str, max_tokens: int = 160) -> str:
        return await self.env.llm.complete(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            purpose="memory", temperature=0.0, max_tokens=max_tokens)

    async def judge(self, query: str) -> Proposal:
        """ADD or KEEP for the code context memory (no state changes)."""
        repo = self.env.repo
        if repo is None:
            return Proposal("KEEP", reason="no repository")
        have = set(self.context_memory)
        if not have:
            proposal = Proposal("ADD", reason="memory empty")
        else:
            keys = "\n\n".join(f"[{i}] {b.key}" for i, b in enumerate(self.context_memory.values()))
            asked = "\n".join(f"{i + 1}. {text}" for i, text in enumerate(self.instructions))
            prompt = (f"Instructions so far:\n{asked or '(none)'}\n\n"
                      f"Current instruction:\n{query}\n\nKeys of the blocks in memory:\n{keys}")
            try:
                data = await self.env.llm.ask_json(JUDGE_PROMPT, prompt, JUDGE_SCHEMA,
                                                   name="decision", max_tokens=120)
                proposal = self._parse_decision(data)
            except (MalformedJSON, LLMError) as exc:
                proposal = Proposal("KEEP", reason=f"judge output unusable, kept memory: {exc}")
                log.warning("codemem: %s", proposal.reason)
        if proposal.decision == "ADD":
            wanted = " ".join([query, *proposal.targets])
            proposal.added = await asyncio.to_thread(retrieve_new, repo, wanted, have)
        return proposal

    @staticmethod
    def _parse_decision(data: Any) -> Proposal:
        if not isinstance(data, dict):
            raise MalformedJSON("not an object")
        decision = str(data.get("decision", "")).strip().upper()
        if decision not in ("ADD", "KEEP"):
            raise MalformedJSON(f"decision {decision!r} is neither ADD nor KEEP")
        targets = data.get("targets") or []
        if not isinstance(targets, list):
            targets = [targets]
        return Proposal(decision, [str(t) for t in targets if str(t).strip()][:10])

    async def _sentence(self, system: str, user: str) -> str:
        try:
            text = await self._ask(system, user, 80)
        except LLMError as exc:
            log.warning("codemem: note skipped: %s", exc)
            return ""
        return " ".join(text.split())[:400]

    async def modification_note(self, block: SessionBlock, query: str) -> str:
        return await self._sentence(
            MODIFY_PROMPT,
            f"Latest version of `{block.function}`:\n{fenced(block.code, 'python')}\n\n"
            f"New instruction: {query}")

    async def change_note(self, draft: Draft, instruction: str) -> str:
        added = "\n".join(draft.diff.added) or "(none)"
        removed = "\n".join(draft.diff.removed) or "(none)"
        note = await self._sentence(
            SUMMARY_PROMPT,
            f"Function: {draft.function}\nInstruction: {instruction}\n\n"
            f"Added statements:\n{added}\n\nRemoved statements:\n{removed}")
        return note or (f"{draft.function}: {len(draft.diff.added)} statements added, "
                        f"{len(draft.diff.removed)} removed")

    async def _embed(self, text: str) -> np.ndarray:
        return (await asyncio.to_thread(self.env.embedder.embed, [text]))[0]

    # -- context -----------------------------------------------------------------------
    def _fit(self, sections: list[Section], budget: int) -> list[Section]:
        kept, used = [], 0
        for section in sections:
            if used + section.tokens <= budget:
                kept.append(section)
                used += section.tokens
        return kept

    def _section(self, kind: str, source: str, text: str) -> Section:
        return Section(kind, source, text, self.env.count(text))  # type: ignore[arg-type]

    async def session_sections(self, query: str) -> list[Section]:
        sections = []
        for function in self.session.relevant(query)[:NOTED_FUNCTIONS]:
            latest = self.session.latest(function)
            if latest is None:
                continue
            for earlier in self.session.linked(latest):
                sections.append(self._section(
                    "memory", f"codemem:{function}#{earlier.number}",
                    f"Earlier step on `{function}` (turn {earlier.turn}, instruction: "
                    f"{earlier.instruction!r}): {earlier.note}"))
            sections.append(self._section(
                "memory", f"codemem:{function}#{latest.number}",
                f"Latest version of `{function}` (turn {latest.turn}, instruction: "
                f"{latest.instruction!r}; {latest.note})\n{fenced(latest.code, 'python')}"))
            note = await self.modification_note(latest, query)
            if note:
                sections.append(self._section("memory", f"codemem:note:{function}",
                                              f"To change in `{function}` now: {note}"))
        return sections

    async def context(self, query: str, *, budget: int) -> ContextPack:
        proposal = await self.judge(query)
        self._proposal = (query, self.state_digest(), proposal)
        session = self._fit(await self.session_sections(query), int(budget * SESSION_SHARE))
        used = sum(s.tokens for s in session)
        asked = [f"{i + 1}. {text}" for i, text in enumerate(self.instructions)]
        instructions: list[Section] = []
        while asked:
            section = self._section("memory", "codemem:instructions",
                                    "Instructions so far:\n" + "\n".join(asked))
            if section.tokens <= int(budget * INSTRUCTION_SHARE):
                instructions = [section]
                break
            asked = asked[1:]  # drop the oldest until it fits
        used += sum(s.tokens for s in instructions)
        blocks = [*self.context_memory.values(), *proposal.added]
        code = self._fit([self._section("repo", b.location, render_chunk(b.location, b.code))
                          for b in blocks], budget - used)
        return ContextPack(query, [*instructions, *session, *code], self.env.count(query))

    # -- after generation ------------------------------------------------------------------
    async def review(self, turn: Turn, pack: ContextPack) -> list[dict[str, str]] | None:
        """The AST detector: messages for one regeneration if the answer undoes earlier
        blocks of differently-worded instructions, else None."""
        draft = self.session.draft(turn.user, turn.assistant)
        if draft is None or draft.diff.empty:
            return None
        conflicts = self.session.conflicts(draft, await self._embed(turn.user))
        if not conflicts:
            return None
        turn.meta[self.name] = {"function": draft.function,
                                "conflicts": [c.to_dict() for c in conflicts]}
        return [*pack.to_messages(),
                {"role": "assistant", "content": turn.assistant},
                {"role": "user", "content": self._conflict_text(draft.function, conflicts)}]

    @staticmethod
    def _conflict_text(function: str, conflicts: list[Conflict]) -> str:
        lines = []
        for c in conflicts:
            parts = []
            if c.undone:
                parts.append(f"it added {_lines(c.undone)}, which your code removes")
            if c.redone:
                parts.append(f"it removed {_lines(c.redone)}, which your code adds back")
            lines.append(f"- turn {c.turn} ({c.instruction!r}): " + "; ".join(parts))
        return REGENERATE.format(function=function, conflicts="\n".join(lines))

    # -- observe ---------------------------------------------------------------------------
    async def observe(self, turn: Turn) -> None:
        cached = self._proposal
        self._proposal = None
        if cached is not None and cached[0] == turn.user and cached[1] == self.state_digest():
            proposal = cached[2]
        else:
            proposal = await self.judge(turn.user)
        events: list[tuple[str, str]] = []
        for block in proposal.added:
            if block.location not in self.context_memory:
                self.context_memory[block.location] = block
                events.append(("ADD", block.location))
        code = code_blocks(turn.assistant)
        if code:
            external = external_calls("\n\n".join(code))
            kept = select(list(self.context_memory.values()), external)
            events += [("DROP", loc) for loc in self.context_memory
                       if loc not in {b.location for b in kept}]
            self.context_memory = {b.location: b for b in kept}
        await self._remember_code(turn, events)
        self.instructions.append(turn.user)
        self._digest.update(turn.index, turn.user, *sorted(self.context_memory),
                            *(f"{op}:{what}" for op, what in events))
        self.last_events = events
        for op, what in events:
            block = self.session.find(what) if op == "BLOCK" else None
            text = f"{what}: {block.note}" if block is not None else what
            self._pending.append({"type": "memory", "backend": self.name, "op": op,
                                  "id": what, "text": text, "turn": turn.index})
        if proposal.reason and proposal.decision == "KEEP" and "unusable" in proposal.reason:
            self._pending.append({"type": "memory", "backend": self.name, "op": "skipped",
                                  "id": "", "text": proposal.reason, "turn": turn.index})

    async def observe_many(self, turns: list[Turn]) -> None:
        for turn in turns:
            await self.observe(turn)

    async def _remember_code(self, turn: Turn, events: list[tuple[str, str]]) -> None:
        draft = self.session.draft(turn.user, turn.assistant)
        if draft is None:
            return
        vector = await self._embed(turn.user)
        remaining = self.session.conflicts(draft, vector)
        found = turn.meta.get(self.name, {}).get("conflicts", [])
        note = await self.change_note(draft, turn.user)
        block = self.session.add(draft, turn.user, note, turn.index, vector)
        events.append(("BLOCK", f"{block.function}#{block.number}"))
        if found or remaining:
            self._pending.append({
                "type": "memory", "backend": self.name, "op": "conflict",
                "id": f"{block.function}#{block.number}", "turn": turn.index,
                "text": f"{len(found)} conflict(s) found, {len(remaining)} left in the "
                        "final answer",
                "conflicts": found, "remaining": [c.to_dict() for c in remaining],
                "regenerated": bool(turn.meta.get(self.name, {}).get("regenerated")),
            })

    def drain_records(self) -> list[dict[str, Any]]:
        records, self._pending = self._pending, []
        return records

    def memory_view(self) -> list[tuple[str, str]]:
        """(text, event of the last turn) rows for people: code blocks, then session blocks."""
        last = {what: op for op, what in self.last_events}
        rows = [(f"code  {loc}", last.get(loc, "")) for loc in self.context_memory]
        rows += [(f"drop  {what}", "DELETE") for op, what in self.last_events if op == "DROP"]
        for block in self.session.live():
            tag = f"{block.function}#{block.number}"
            rows.append((f"session  {tag} (turn {block.turn}): {block.note}",
                         "ADD" if last.get(tag) == "BLOCK" else ""))
        return rows

    # -- steering (memory/turn/steering.py): the developer forgets a block or edits a note -----
    def memory_items(self) -> list[MemoryItem]:
        items = [MemoryItem(loc, f"code {loc}", editable=False) for loc in self.context_memory]
        items += [MemoryItem(f"{b.function}#{b.number}", b.note) for b in self.session.live()]
        return items

    async def forget(self, memory_id: str) -> str:
        if memory_id in self.context_memory:
            del self.context_memory[memory_id]
            text = f"code {memory_id}"
        else:
            text = self.session.forget(memory_id).note
        self._digest.update("forget", memory_id)
        return text

    async def edit(self, memory_id: str, text: str) -> str:
        if memory_id in self.context_memory:
            raise SteeringUnsupported(
                "codemem's code context blocks are the repository's code: edit the file, or "
                "forget the block; the notes of code session blocks can be edited")
        block = self.session.find(memory_id)
        if block is None or block not in self.session.live():
            raise KeyError(memory_id)
        old, block.note = block.note, text
        self._digest.update("edit", memory_id, text)
        return old

    def state_digest(self) -> str:
        return self._digest.value
