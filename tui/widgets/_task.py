"""The slow operation under way: what, n of m, elapsed seconds, and whether Esc cancels it."""

from __future__ import annotations

import time

from textual.reactive import reactive
from textual.widgets import Static


class TaskBar(Static):
    """One line above the prompt, hidden while nothing slow runs; the app calls ``begin``,
    ``step`` and ``end`` (attributes down)."""

    DEFAULT_CSS = "TaskBar { height: 1; padding: 0 1; display: none; }"

    what: reactive[str] = reactive("")
    """What is happening ("catching up mem0"); "" when idle."""
    done: reactive[int] = reactive(0)
    """Steps done."""
    total: reactive[int] = reactive(0)
    """Steps in all; 0 when unknown."""
    cancellable: reactive[bool] = reactive(True)
    """Whether Esc cancels the operation."""

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.started = 0.0

    def on_mount(self) -> None:
        self._ticker = self.set_interval(0.25, self.refresh, pause=True)

    def begin(self, what: str, *, cancellable: bool = True) -> None:
        self.started = time.monotonic()
        self.what, self.done, self.total, self.cancellable = what, 0, 0, cancellable
        self.display = True
        self._ticker.resume()

    def step(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def end(self) -> None:
        self.what = ""
        self.display = False
        self._ticker.pause()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started if self.what else 0.0

    def render(self) -> str:
        if not self.what:
            return ""
        parts = [f"⏳ {self.what}"]
        if self.total:
            parts.append(f"{self.done} of {self.total}")
        parts.append(f"{self.elapsed:.1f} s")
        if self.cancellable:
            parts.append("Esc cancels")
        return " · ".join(parts)
