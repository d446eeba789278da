"""Memory health in the status bar: the session's skipped and failed memory updates,
counted; the first one is explained once in a notification."""

from __future__ import annotations

from typing import Any

from tui.host import Host
from tui.widgets._status import StatusBar


class MemoryHealth:
    def __init__(self, host: Host) -> None:
        self.host = host
        self._warned = False

    def report(self) -> None:
        """Count skipped and failed memory updates in the status bar; say why the first time."""
        host = self.host
        issues: list[dict[str, Any]] = host.agent.memory_issues
        if not issues:
            host.query_one(StatusBar).memory = ""
            return
        skipped = sum(1 for i in issues if i.get("op") == "skipped")
        failed = len(issues) - skipped
        parts = [f"{skipped} skipped"] if skipped else []
        parts += [f"{failed} failed"] if failed else []
        host.query_one(StatusBar).memory = "memory " + ", ".join(parts)
        if not self._warned:
            self._warned = True
            first = issues[0]
            host.notify(f"{first.get('backend', '?')}: {first.get('text', '')}\n"
                        "The inspector (F2) lists every skipped update.",
                        title="memory update skipped" if first.get("op") == "skipped"
                        else "memory update failed", severity="warning", timeout=15)
