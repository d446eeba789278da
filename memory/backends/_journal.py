"""The ``memory`` transcript records a backend owes the Agent (drained after each observe)."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


class Journal:
    """Pending ``memory`` records of one backend: what changed, what was skipped and why."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self._pending: list[dict[str, Any]] = []
        self.applied = 0  # memory operations applied since the backend was built
        self.skipped = 0

    def op(self, op: str, memory_id: str, text: str, **extra: Any) -> None:
        """One operation; ``extra`` fields go into its record as they are."""
        self.applied += 1
        self._pending.append({"type": "memory", "backend": self.backend, "op": op,
                              "id": memory_id, "text": text, **extra})

    def skip(self, why: str) -> None:
        self.skipped += 1
        log.warning("%s: %s", self.backend, why)
        self._pending.append({"type": "memory", "backend": self.backend, "op": "skipped",
                              "id": "", "text": why})

    def drain(self) -> list[dict[str, Any]]:
        records, self._pending = self._pending, []
        return records
