"""The app's background work that needs no session: the repository index (built while
the session opens) and the embedded model (loaded from the first keystroke)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tui.host import Host
from tui.options import AppOptions
from tui.widgets._status import StatusBar


def _build_index(options: AppOptions, progress: Any) -> Any:
    """Runs in a thread: imports and builds off the UI thread."""
    from tui.session import build_index

    return build_index(options, progress)


def _local_model_name(model: str | None) -> str | None:
    """``smollm2`` for ``local/smollm2``; None for a remote model."""
    if model is None:
        from memory.llm.client import default_model

        model = default_model()
    return model.split("/", 1)[1] if model.startswith("local/") else None


class Background:
    """Builds the index and warms the embedded model in the host's workers; ``index`` is
    the repository index once built (the host's agent gets it too, if open by then)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.index: Any = None  # memory.index.repo.RepoIndex once built

    def index_repo(self) -> None:
        self.host.run_worker(self._index_repo, name="index_repo", group="index",
                             exclusive=True)

    async def _index_repo(self) -> None:
        host = self.host
        status = host.query_one(StatusBar)
        last = [0.0]

        def progress(done: int, total: int, what: str) -> None:
            now = time.monotonic()
            if now - last[0] > 0.2 or done == total:
                last[0] = now
                step = "embedding" if what.startswith("embedded") else "reading"
                host.call_from_thread(setattr, status, "index", f"{step} {done}/{total}")

        try:
            index, report = await host.engine.run(
                asyncio.to_thread(_build_index, host.options, progress))
        except Exception as exc:
            status.index = "failed"
            host.notify(f"indexing failed: {exc}", severity="error", timeout=20)
            return
        self.index = index
        if host.agent is not None:
            host.agent.env.repo = index
        status.index = "ready"
        host.notify(f"index ready: {report.summary()}", timeout=6)

    def warm_model(self) -> None:
        """Load the embedded model (if that is the one answering) while the user types."""
        self.host.run_worker(self._warm_model, name="warm_model", group="warm",
                             exclusive=True, thread=True)

    def _warm_model(self) -> None:
        host = self.host
        status = host.query_one(StatusBar)
        model = host.agent.llm.model if host.agent is not None else host.options.model
        name = _local_model_name(model)
        if name is None:
            return
        from memory.llm.local import warm

        host.call_from_thread(setattr, status, "model_loading", True)
        try:
            warm(name)
        except Exception as exc:  # the first answer reports it properly
            host.call_from_thread(host.notify, f"loading local/{name} failed: {exc}",
                                  severity="warning")
        finally:
            host.call_from_thread(setattr, status, "model_loading", False)
