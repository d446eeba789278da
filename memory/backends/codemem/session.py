"""CodeMem's Code Session Memory: the history of each function the assistant wrote.

Every answer with code for a function adds a block {instruction, code, AST diff
against the previous version, note}; the blocks of one function form a sequence.
Blocks whose instructions are at least ``LINK`` similar are linked. The detector
compares a new diff with the function's blocks whose instructions are *less*
similar than ``LINK``: deleting what such a block added, or adding what it
deleted, is a conflict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from memory.backends.codemem.syntax import Diff, ast_diff, code_blocks, first_definition

LINK = 0.95  # instruction similarity that links blocks (and exempts them from conflicts)


@dataclass
class SessionBlock:
    number: int  # position in the session memory
    function: str
    instruction: str
    code: str
    diff: Diff
    note: str
    turn: int
    vector: np.ndarray = field(repr=False)
    links: list[int] = field(default_factory=list)  # numbers of linked earlier blocks


@dataclass(frozen=True)
class Conflict:
    block: int  # the earlier block's number
    turn: int
    instruction: str
    undone: tuple[str, ...]  # statements the earlier block added that are now removed
    redone: tuple[str, ...]  # statements the earlier block removed that are now added

    def to_dict(self) -> dict[str, object]:
        return {"block": self.block, "turn": self.turn, "instruction": self.instruction,
                "undone": list(self.undone), "redone": list(self.redone)}


@dataclass(frozen=True)
class Draft:
    """An answer's code for one function, before it becomes a block."""

    function: str
    code: str
    diff: Diff


def _similarity(a: np.ndarray, b: np.ndarray) -> float:
    denom = float(np.linalg.norm(a) * np.linalg.norm(b)) or 1.0
    return float(np.dot(a, b) / denom)


class SessionMemory:
    def __init__(self) -> None:
        self.blocks: list[SessionBlock] = []
        self.by_function: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def last_function(self) -> str | None:
        live = self.live()
        return live[-1].function if live else None

    def live(self) -> list[SessionBlock]:
        """The blocks not forgotten, in order."""
        return sorted((self.blocks[n] for numbers in self.by_function.values() for n in numbers),
                      key=lambda b: b.number)

    def forget(self, tag: str) -> SessionBlock:
        """Forget the block tagged ``function#number`` (the developer asked); KeyError if
        there is none. Its number stays taken, so the other blocks keep theirs."""
        block = self.find(tag)
        numbers = self.by_function.get(block.function, []) if block is not None else []
        if block is None or block.number not in numbers:
            raise KeyError(tag)
        numbers.remove(block.number)
        if not numbers:
            del self.by_function[block.function]
        for other in self.blocks:
            if block.number in other.links:
                other.links.remove(block.number)
        return block

    def latest(self, function: str) -> SessionBlock | None:
        numbers = self.by_function.get(function)
        return self.blocks[numbers[-1]] if numbers else None

    def find(self, tag: str) -> SessionBlock | None:
        """The block tagged ``function#number``, or None."""
        return next((b for b in self.blocks if f"{b.function}#{b.number}" == tag), None)

    def linked(self, block: SessionBlock) -> list[SessionBlock]:
        return [self.blocks[n] for n in block.links]

    def named_in(self, text: str) -> list[str]:
        """Functions of this memory that ``text`` names, in order of first mention."""
        found = []
        for match in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", text):
            name = match.group(0)
            if name in self.by_function and name not in found:
                found.append(name)
        return found

    def relevant(self, instruction: str) -> list[str]:
        """The functions an instruction is about: those it names, else the last one."""
        named = self.named_in(instruction)
        if named:
            return named
        last = self.last_function
        return [last] if last else []

    def draft(self, instruction: str, answer: str) -> Draft | None:
        """The code an answer gives for one function, and its diff to the previous version.

        The function is the first def/class in the answer, else the one the instruction
        names, else the previous one."""
        blocks = code_blocks(answer)
        if not blocks:
            return None
        function = None
        code = "\n\n".join(blocks)
        for block in blocks:
            function = first_definition(block)
            if function:
                code = block
                break
        if not function:
            named = self.named_in(instruction)
            function = named[0] if named else self.last_function
        if not function:
            return None
        previous = self.latest(function)
        diff = ast_diff(previous.code if previous else "", code, function)
        return Draft(function, code, diff)

    def conflicts(self, draft: Draft, vector: np.ndarray) -> list[Conflict]:
        """Earlier blocks of the function, with dissimilar instructions, that the draft undoes."""
        found = []
        added, removed = set(draft.diff.added), set(draft.diff.removed)
        for number in self.by_function.get(draft.function, []):
            block = self.blocks[number]
            if _similarity(vector, block.vector) >= LINK:
                continue
            undone = tuple(s for s in block.diff.added if s in removed)
            redone = tuple(s for s in block.diff.removed if s in added)
            if undone or redone:
                found.append(Conflict(number, block.turn, block.instruction, undone, redone))
        return found

    def add(self, draft: Draft, instruction: str, note: str, turn: int,
            vector: np.ndarray) -> SessionBlock:
        number = len(self.blocks)
        links = [n for n in self.by_function.get(draft.function, [])
                 if _similarity(vector, self.blocks[n].vector) >= LINK]
        block = SessionBlock(number, draft.function, instruction, draft.code, draft.diff,
                             note, turn, vector, links)
        self.blocks.append(block)
        self.by_function.setdefault(draft.function, []).append(number)
        return block
