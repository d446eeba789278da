"""The slow operation under way: shown in the task bar while its worker runs; Esc
cancels it. One per app, handed to the controllers that start slow operations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from textual.worker import Worker, get_current_worker

from tui.widgets._task import TaskBar


class Operations:
    def __init__(self, task_bar: Callable[[], TaskBar]) -> None:
        self._task_bar = task_bar
        self.what = ""  # the slow operation under way ("" when idle)
        self._worker: Worker[Any] | None = None  # what Esc cancels

    @contextmanager
    def shown(self, what: str, *, cancellable: bool = True) -> Iterator[None]:
        """Show ``what`` in the task bar while the calling worker runs; Esc cancels it."""
        self.what = what
        self._worker = get_current_worker() if cancellable else None
        self._task_bar().begin(what, cancellable=cancellable)
        try:
            yield
        finally:
            self.what, self._worker = "", None
            self._task_bar().end()

    def progress(self) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` for the engine thread: posts to the task bar, never
        waits for the UI."""
        loop, bar = asyncio.get_running_loop(), self._task_bar()
        return lambda done, total: loop.call_soon_threadsafe(bar.step, done, total)

    def cancel(self) -> None:
        worker = self._worker
        if worker is not None and not worker.is_finished:
            worker.cancel()
