"""litellm, imported on first use (it takes seconds, never at module import), and what
memory/llm/client.py needs around it: the errors of a call, what an exception from a provider
means (retry or not), prices from litellm's cost map, and error text safe to show."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from typing import Any

from memory.llm.models import ModelConfigError, resolve
from memory.redact import redact


class LLMError(RuntimeError):
    """An LLM call failed for good; ``partial`` holds any text streamed before the failure."""

    def __init__(self, message: str, *, partial: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.partial = partial
        self.retryable = retryable


class StructuredOutputError(LLMError):
    """A structured call's answer did not validate, even after the corrective retry."""


_litellm: Any = None


def import_litellm() -> Any:
    """Import litellm once, offline, with the embedded provider registered."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        logging.getLogger("LiteLLM").setLevel(logging.WARNING)
        from memory.llm.local import register_local_provider

        register_local_provider()
        _litellm = litellm
    return _litellm


def classify(exc: BaseException) -> tuple[str, bool]:
    """A short reason for an exception from litellm, and whether a retry may help."""
    from memory.llm.local import LocalModelError

    if isinstance(exc, LocalModelError):  # the embedded model: a retry would fail again
        return "embedded model", False
    if isinstance(exc, asyncio.TimeoutError) and _litellm is None:
        return "timed out", True
    litellm = import_litellm()
    retryable = (
        litellm.Timeout,
        litellm.RateLimitError,
        litellm.APIConnectionError,
        litellm.ServiceUnavailableError,
        litellm.InternalServerError,
        asyncio.TimeoutError,
    )
    if isinstance(exc, litellm.Timeout | asyncio.TimeoutError):
        return "timed out", True
    if isinstance(exc, litellm.RateLimitError):
        return "rate limited", True
    if isinstance(exc, litellm.AuthenticationError):
        return "authentication failed (is the API key set and valid?)", False
    if isinstance(exc, litellm.NotFoundError):
        return "model not found", False
    if isinstance(exc, litellm.ContextWindowExceededError):
        return "context window exceeded", False
    return type(exc).__name__, isinstance(exc, retryable)


def priced_as(model: str) -> str | None:
    """The name litellm's cost map prices ``model`` as: the model as named, else the name
    after its provider prefix (a proxy's ``x/gpt-4o-mini``); None for a model it does not
    price (the embedded model, a self-hosted one)."""
    if model.startswith("local/"):
        return None
    with contextlib.suppress(ModelConfigError):
        model = resolve(model).model
    for name in dict.fromkeys((model, model.split("/", 1)[-1])):
        if _in_cost_map(name):
            return name
    return None


@functools.lru_cache(maxsize=256)
def _in_cost_map(name: str) -> bool:
    """Whether litellm's cost map prices ``name`` (asked once per name: the map is the
    local copy read at import, and a miss costs litellm a search of every provider)."""
    try:
        import_litellm().cost_per_token(model=name, prompt_tokens=1, completion_tokens=1)
    except Exception:
        return False
    return True


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """Dollars for these tokens by litellm's cost map; $0 for a model it does not price."""
    name = priced_as(model)
    if name is None:
        return 0.0
    costs = import_litellm().cost_per_token(model=name, prompt_tokens=prompt_tokens,
                                            completion_tokens=completion_tokens)
    return float(sum(costs))


def brief(exc: BaseException, limit: int = 300) -> str:
    """The first line of a provider's error, redacted: error bodies echo keys and headers."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact(text)[:limit]
