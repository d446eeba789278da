"""The embedded models as the litellm custom provider ``local`` (``local/<name>``), for
code that goes through litellm itself. litellm's ``CustomLLM`` signature is wide and
untyped; it is wrapped once here. litellm is imported only when the provider is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from memory.llm.local.load import load_local_model
from memory.llm.local.model import Generation, LocalModel
from memory.llm.local.spec import LocalModelError
from memory.llm.local.threads import in_thread


def _make_provider() -> Any:
    """Build the litellm CustomLLM subclass; litellm is imported only when needed."""
    import litellm
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError

    def unpack(kwargs: dict[str, Any]) -> tuple[LocalModel, list[dict[str, Any]], dict]:
        name = str(kwargs["model"]).split("/", 1)[-1]
        try:
            model = load_local_model(name)
        except LocalModelError as exc:
            raise CustomLLMError(status_code=404, message=str(exc)) from exc
        return model, kwargs["messages"], dict(kwargs.get("optional_params") or {})

    def response(kwargs: dict[str, Any], gen: Generation) -> Any:
        return litellm.ModelResponse(
            model=kwargs["model"],
            choices=[{"message": {"role": "assistant", "content": gen.text},
                      "finish_reason": "stop", "index": 0}],
            usage={
                "prompt_tokens": gen.prompt_tokens,
                "completion_tokens": gen.completion_tokens,
                "total_tokens": gen.prompt_tokens + gen.completion_tokens,
            },
        )

    def chunks(model: LocalModel, messages: list, params: dict,
               cancel: threading.Event) -> Iterator[dict[str, Any]]:
        try:
            for item in model.stream(messages, params, cancel):
                if isinstance(item, tuple):
                    prompt, completion = item
                    yield {
                        "text": "", "is_finished": True, "finish_reason": "stop", "index": 0,
                        "tool_use": None,
                        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                  "total_tokens": prompt + completion},
                    }
                else:
                    yield {"text": item, "is_finished": False, "finish_reason": "",
                           "index": 0, "tool_use": None, "usage": None}
        except LocalModelError as exc:
            raise CustomLLMError(status_code=400, message=str(exc)) from exc

    class LocalProvider(CustomLLM):  # type: ignore[misc]
        """litellm's view of the embedded models: ``local/<name>``."""

        def completion(self, *args: Any, cancel: threading.Event | None = None,
                       **kwargs: Any) -> Any:
            model, messages, params = unpack(kwargs)
            try:
                return response(kwargs, model.generate(messages, params, cancel))
            except LocalModelError as exc:
                raise CustomLLMError(status_code=400, message=str(exc)) from exc

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            cancel = threading.Event()
            try:
                return await asyncio.to_thread(self.completion, *args, cancel=cancel, **kwargs)
            finally:
                cancel.set()  # a cancelled caller: the thread stops at the next token

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            model, messages, params = unpack(kwargs)
            yield from chunks(model, messages, params, threading.Event())

        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            """Tokens from a thread of their own; the consumer giving up (cancelled, or
            closing the stream) stops the generation at the next token."""
            model, messages, params = await asyncio.to_thread(unpack, kwargs)
            produce = in_thread(lambda cancel: chunks(model, messages, params, cancel))
            async with contextlib.aclosing(produce) as items:  # closed with us: cancel now
                async for item in items:
                    yield item

    return LocalProvider()


_registered = False


def register_local_provider() -> None:
    """Make ``local/<name>`` models callable through litellm (idempotent)."""
    global _registered
    if _registered:
        return
    import litellm

    entry = {"provider": "local", "custom_handler": _make_provider()}
    litellm.custom_provider_map = [
        p for p in litellm.custom_provider_map if p.get("provider") != "local"
    ] + [entry]
    # litellm reads custom_provider_map into its provider list on this call.
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
    _registered = True
