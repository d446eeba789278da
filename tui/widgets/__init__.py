"""engram's widgets, one per module; imported on first use, so the first frame
does not wait for Markdown and friends."""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = {
    "ABView": "_ab", "AnswerPane": "_ab", "Inspector": "_inspector", "MemoryRow": "_inspector",
    "PromptArea": "_prompt", "StatusBar": "_status", "SteerItem": "_steer", "SteerList": "_steer",
    "TaskBar": "_task", "TurnView": "_turn",
}
__all__ = sorted(_MODULES)


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module 'tui.widgets' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tui.widgets.{_MODULES[name]}"), name)
