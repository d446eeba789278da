"""Past turns kept verbatim (``full``, ``rag``), steered alike: each turn is a memory the
developer can see and forget whole, never edit (memory/turn/steering.py's protocol)."""

from __future__ import annotations

from memory.backends.base import Digest
from memory.turn.steering import MemoryItem, SteeringUnsupported
from memory.types import Section


class VerbatimTurns:
    """The steering half of a backend holding ``_turns`` (each turn's sections, in order)
    and a ``_digest``. A backend that keeps more per turn (rag: its vector) drops it in
    ``_forgotten``."""

    name: str
    _turns: list[list[Section]]
    _digest: Digest

    def memory_items(self) -> list[MemoryItem]:
        return [MemoryItem(group[0].source, group[0].text, editable=False)
                for group in self._turns]

    async def forget(self, memory_id: str) -> str:
        number = next((i for i, group in enumerate(self._turns)
                       if group[0].source == memory_id), None)
        if number is None:
            raise KeyError(memory_id)
        group = self._turns.pop(number)
        self._forgotten(number)
        self._digest.update("forget", memory_id)
        return group[0].text

    def _forgotten(self, number: int) -> None:
        """What else the backend keeps of turn ``number`` goes too (nothing here)."""

    async def edit(self, memory_id: str, text: str) -> str:
        raise SteeringUnsupported(
            f"{self.name} keeps past turns verbatim: a turn can be forgotten (d), not edited")
