"""Memory health in the status bar: the session's skipped and failed memory updates,
counted, the first one explained once in a notification; and the project's instructions
when they pass the room of the context (never cut: said here and in the inspector)."""

from __future__ import annotations

from typing import Any

from tui.host import Host
from tui.widgets._status import StatusBar


class MemoryHealth:
    def __init__(self, host: Host) -> None:
        self.host = host
        self._warned = False
        self._warned_over = False

    def report(self) -> None:
        """Count skipped and failed memory updates in the status bar; say why the first time."""
        self.report_instructions()
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

    def report_instructions(self) -> None:
        """The last context's instructions over its room: in the status bar, and once in a
        notification that says what to do."""
        placed = getattr(self.host.agent, "placed", None)
        over = getattr(placed, "over", 0)
        self.host.query_one(StatusBar).instructions = \
            f"instructions over by {over:,} tok" if over else ""
        if over and not self._warned_over:
            self._warned_over = True
            self.host.notify(f"{placed.note()}.\nShorten {', '.join(placed.files)} or use a "
                             "model with a larger window; the inspector (F2) lists them.",
                             title="project instructions over budget", severity="warning",
                             timeout=15)
