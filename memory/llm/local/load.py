"""Loading the embedded models: one process-wide instance each, loaded on first use,
warmed ahead of the first answer (``preload``, ``warm``), freed at exit."""

from __future__ import annotations

import atexit
import contextlib
import threading
import time

from memory.llm.local.model import LocalModel
from memory.llm.local.spec import LOCAL_MODELS

_models: dict[str, LocalModel] = {}
_models_lock = threading.Lock()


def load_local_model(name: str) -> LocalModel:
    """The process-wide instance of an embedded model (loaded on first use)."""
    with _models_lock:
        if name not in _models:
            if not _models:
                atexit.register(_close_all)
            _models[name] = LocalModel(name)
        return _models[name]


def _close_all() -> None:
    """Free llama.cpp's models before interpreter teardown (its finaliser fails late)."""
    with _models_lock:
        for model in _models.values():
            with contextlib.suppress(Exception):
                model.llama.close()
        _models.clear()


def preload(model: str) -> threading.Thread | None:
    """Start loading what the first answer with ``model`` (``local/NAME``) needs, its
    weights, on a background thread, so it overlaps with opening the index (its calls
    need no litellm: ``memory.llm.local_calls``); ``None`` for other models. Errors are left
    for the first real call to report."""
    if not model.startswith("local/") or model.split("/", 1)[1] not in LOCAL_MODELS:
        return None

    def load() -> None:
        with contextlib.suppress(Exception):
            warm(model.split("/", 1)[1])

    thread = threading.Thread(target=load, name=f"preload {model}", daemon=True)
    thread.start()
    return thread


def warm(name: str = "smollm2") -> float:
    """Load an embedded model now; returns the seconds it took."""
    start = time.perf_counter()
    load_local_model(name)
    return time.perf_counter() - start
