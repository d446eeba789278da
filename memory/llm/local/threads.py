"""A generation run in a thread of its own, its pieces yielded to an async consumer;
the consumer giving up cancels it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class _Failed:
    error: BaseException


async def in_thread(produce: Callable[[threading.Event], Iterator[Any]]) -> AsyncIterator[Any]:
    """The items of ``produce(cancel)``, made in a thread of their own and yielded here as
    they come; an error there is raised here. The consumer giving up (cancelled, or
    closing the iterator) sets ``cancel``: llama.cpp stops at the next token."""
    loop, queue = asyncio.get_running_loop(), asyncio.Queue[Any]()
    cancel, done = threading.Event(), object()

    def post(item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        try:
            for item in produce(cancel):
                post(item)
        except BaseException as exc:  # handed to the consumer
            post(_Failed(exc))
        finally:
            post(done)

    threading.Thread(target=pump, name="engram-local-stream", daemon=True).start()
    try:
        while (item := await queue.get()) is not done:
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        cancel.set()
