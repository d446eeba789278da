"""Calls to the embedded model straight from ``memory.llm.client``, without litellm.

Importing litellm costs ~2.5 s of CPU; a user of the offline default never needs it,
so the embedded model is called here directly and answers in litellm's shapes (a
response with ``choices[0].message.content`` and ``usage``; a stream of chunks with
``choices[0].delta.content``, the last one carrying ``usage``), which ``memory.llm.client``
reads the same way for every model. Token counts use the model's own tokenizer, the
one its window is measured in. ``memory.llm.local.provider`` keeps the litellm provider for code
that goes through litellm itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from memory.llm.local.load import load_local_model
from memory.llm.local.model import LocalModel
from memory.llm.local.threads import in_thread

PARAMS = ("max_tokens", "temperature", "response_format", "seed")


def _model(model: str) -> LocalModel:
    return load_local_model(model.split("/", 1)[1])


def count_tokens(model: str, text: str) -> int:
    """Tokens of ``text`` in the embedded model's own tokenizer."""
    return len(_model(model).tokens(text)) if text else 0


def count_messages(model: str, messages: list[dict[str, Any]]) -> int:
    """Tokens of ``messages`` as the model sees them (its chat template applied)."""
    local = _model(model)
    return len(local.tokens(local.render(messages)))


def _usage(prompt: int, completion: int) -> SimpleNamespace:
    return SimpleNamespace(prompt_tokens=prompt, completion_tokens=completion,
                           total_tokens=prompt + completion)


async def acompletion(*, model: str, messages: list[dict[str, Any]], stream: bool = False,
                      **kwargs: Any) -> Any:
    """One call to ``local/NAME``: a response, or (``stream``) an async iterator of chunks.
    A caller that gives up (cancelled, timed out) stops the generation at the next token."""
    params = {k: kwargs[k] for k in PARAMS if k in kwargs}
    local = await asyncio.to_thread(_model, model)
    if stream:
        return _chunks(local, messages, params)
    cancel = threading.Event()
    try:
        gen = await asyncio.to_thread(local.generate, messages, params, cancel)
    finally:
        cancel.set()
    message = SimpleNamespace(role="assistant", content=gen.text)
    return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")],
                           usage=_usage(gen.prompt_tokens, gen.completion_tokens))


async def _chunks(local: LocalModel, messages: list[dict[str, Any]],
                  params: dict[str, Any]) -> AsyncIterator[Any]:
    """The pieces of one generation, from a thread of its own."""
    produce = in_thread(lambda cancel: local.stream(messages, params, cancel))
    async with contextlib.aclosing(produce) as items:  # closed with us: cancel at once
        async for item in items:
            if isinstance(item, tuple):  # (prompt tokens, completion tokens): the end
                yield SimpleNamespace(choices=[], usage=_usage(*item))
            else:
                delta = SimpleNamespace(content=item)
                yield SimpleNamespace(choices=[SimpleNamespace(delta=delta)], usage=None)
