"""The app's background work that needs no session: the repository index (built while
the session opens) and the embedded model (loaded from the first keystroke)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from textual import work

from tui.widgets._status import StatusBar

if TYPE_CHECKING:
    from tui.app import AppOptions, EngramApp


def _build_index(options: AppOptions, progress: Any) -> Any:
    """Runs in a thread: imports and builds off the UI thread."""
    from tui.session import build_index

    return build_index(options, progress)


def _local_model_name(model: str | None) -> str | None:
    """``smollm2`` for ``local/smollm2``; None for a remote model."""
    if model is None:
        from memory.llm import default_model

        model = default_model()
    return model.split("/", 1)[1] if model.startswith("local/") else None


class Background:
    """Mixed into ``EngramApp``."""

    @work(exclusive=True, group="index")
    async def index_repo(self: EngramApp) -> None:
        status = self.query_one(StatusBar)
        last = [0.0]

        def progress(done: int, total: int, what: str) -> None:
            now = time.monotonic()
            if now - last[0] > 0.2 or done == total:
                last[0] = now
                step = "embedding" if what.startswith("embedded") else "reading"
                self.call_from_thread(setattr, status, "index", f"{step} {done}/{total}")

        try:
            index, report = await self.engine.run(
                asyncio.to_thread(_build_index, self.options, progress))
        except Exception as exc:
            status.index = "failed"
            self.notify(f"indexing failed: {exc}", severity="error", timeout=20)
            return
        self._index = index
        if self.agent is not None:
            self.agent.env.repo = index
        status.index = "ready"
        self.notify(f"index ready: {report.summary()}", timeout=6)

    @work(thread=True, exclusive=True, group="warm")
    def warm_model(self: EngramApp) -> None:
        """Load the embedded model (if that is the one answering) while the user types."""
        status = self.query_one(StatusBar)
        model = self.agent.llm.model if self.agent is not None else self.options.model
        name = _local_model_name(model)
        if name is None:
            return
        from memory.local import warm

        self.call_from_thread(setattr, status, "model_loading", True)
        try:
            warm(name)
        except Exception as exc:  # the first answer reports it properly
            self.call_from_thread(self.notify, f"loading local/{name} failed: {exc}",
                                  severity="warning")
        finally:
            self.call_from_thread(setattr, status, "model_loading", False)
