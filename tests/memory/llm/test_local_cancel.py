"""Cancelling a local-model answer (Esc in the app) stops llama.cpp's generation too."""

from __future__ import annotations

import asyncio
import time

import pytest

pytestmark = pytest.mark.slow

# A prompt SmolLM2 answers at length under its card's sampling (~10 s to the 400-token cap
# here); "count from 1 to 500" now ends after a few lines, before the cancel could land.
LONG = [{"role": "user",
         "content": "Write a long story about a dragon who learns to cook, in at least 600 words."}]


async def _cancel_after_first_token(call) -> None:
    from memory.llm.client import LLM, LLMConfig

    llm = LLM(LLMConfig(model="local/smollm2", max_tokens=400))
    started = asyncio.Event()
    task = asyncio.create_task(call(llm, started))
    await asyncio.wait_for(started.wait(), 120)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_cancelled_generation_frees_the_model_at_once(streaming):
    from memory.llm.local import load_local_model

    model = load_local_model("smollm2")
    pieces: list[str] = []

    async def call(llm, started: asyncio.Event) -> None:
        if streaming:
            await llm.stream(LONG, purpose="answer",
                             on_token=lambda p: (pieces.append(p), started.set()))
        else:
            asyncio.get_running_loop().call_later(1.0, started.set)  # mid-generation
            await llm.complete(LONG, purpose="answer")

    await _cancel_after_first_token(call)
    # the generation stops at the next token: the model is free well before 400 tokens
    start = time.monotonic()
    assert model._lock.acquire(timeout=3), "llama.cpp still generating after the cancel"
    model._lock.release()
    assert time.monotonic() - start < 3
