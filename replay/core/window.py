"""A replay's model window: the model's own, a bounded one, or unbounded (``--window``).

Every budget of a pair is cut from ``LLM.context_window()``: the answer's context
(``Agent.budget``: ``full`` drops its oldest turns whole past it, every other backend
packs within it) and a backend's own shares of the window (``compact``'s trigger,
``memgpt``'s main context). A bounded window replaces that number for all of them at
once, so a run can make ``full`` outgrow a window as LoCoEval's conversations do
(64K-256K tokens; e.g. ``--window 32768``) whatever model answers.
"""

from __future__ import annotations

from memory.llm.client import LLM, LLMConfig

UNBOUNDED = 1 << 40  # ``--window 0``: more tokens than any conversation holds


class WindowedLLM(LLM):
    """An ``LLM`` whose window is ``window`` tokens, whatever the model's own."""

    def __init__(self, config: LLMConfig, window: int) -> None:
        super().__init__(config)
        self.window = window

    def context_window(self) -> int:
        return self.window


def window_tokens(window: int | None) -> int | None:
    """The window a setting stands for: None (the model's own), 0 (unbounded) or N > 0."""
    if window is None:
        return None
    if window < 0:
        raise ValueError(f"a window is 0 (unbounded) or a number of tokens, not {window}")
    return window or UNBOUNDED


def answer_llm(model: str, window: int | None) -> LLM:
    """The LLM of a pair: the model's own window, or ``window`` (0: unbounded)."""
    tokens = window_tokens(window)
    config = LLMConfig(model=model)
    return LLM(config) if tokens is None else WindowedLLM(config, tokens)
