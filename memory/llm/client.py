"""Every LLM call engram makes goes through here, and through litellm (the embedded
model's go straight to it, ``memory.llm.local_calls``: no litellm import for offline use).

One ``LLM`` per model: completion and streaming with a timeout and retries with
backoff, a usage ledger split by purpose, token counting, the model's window.
litellm is imported on first use (it takes seconds), never at module import.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from memory.llm import structured
from memory.llm._litellm import (
    LLMError,
    StructuredOutputError,
    brief,
    classify,
    import_litellm,
    price,
    priced_as,
)
from memory.llm._schema import StructuredStats
from memory.llm._structured_calls import StructuredCalls
from memory.llm.models import OPENAI_LIKE, ModelConfigError, Route, probe, resolve
from memory.recent import Recent
from memory.settings import Settings, current
from memory.types import Usage

log = logging.getLogger(__name__)

LOCAL_DEFAULT = "local/smollm2"
# The first provider key found in the environment picks that provider's small model
# (memory.settings.PROVIDER_KEYS lists the same names: the settings keep which are set).
KEYED_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("OPENAI_API_KEY", "openai/gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-3-5-haiku-latest"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("GEMINI_API_KEY", "gemini/gemini-2.0-flash"),
)
FALLBACK_WINDOW = 8192
# token counts of recent texts by (model, text): a tokenizer is a pure function of both;
# texts longer than COUNTED_CHARS (tool outputs, whole files) are counted, never kept
COUNTS_KEPT, COUNTED_CHARS = 8192, 16_000
_counts: Recent[int] = Recent(COUNTS_KEPT)
# Awaited before every try of every call with the model's name: a process-wide rate
# limiter (replay's ``--rpm``, shared by the workers of a cluster) plugs in here.
RateGate = Callable[[str], Awaitable[None]]
_rate_gate: RateGate | None = None


def set_rate_gate(gate: RateGate | None) -> None:
    """Install (or with None remove) the gate every call waits on before each try."""
    global _rate_gate
    _rate_gate = gate


async def _wait_gate(model: str) -> None:
    if _rate_gate is not None:
        await _rate_gate(model)
DEFAULT_TIMEOUT = 180.0  # seconds; the embedded model on a busy CPU needs minutes per prompt


def default_model(settings: Settings | None = None) -> str:
    """The model of the settings (``--model``, ``$ENGRAM_MODEL``, the config's), else the
    small model of the first provider whose key is set, else the embedded one."""
    settings = settings or current()
    if settings.model:
        return settings.model
    for key, model in KEYED_DEFAULTS:
        if key in settings.keys:
            return model
    return LOCAL_DEFAULT


def route_of(model: str, api_base: str | None = None, structured_mode: str | None = None,
             settings: Settings | None = None) -> Route:
    """Where ``model`` (a model string or a config alias) is served; LLMError if its
    alias, api base or forced mode cannot be used."""
    try:
        return resolve(model, api_base=api_base, structured=structured_mode,
                       settings=settings)
    except ModelConfigError as exc:
        raise LLMError(str(exc)) from None


def check_model(model: str, api_base: str | None = None,
                settings: Settings | None = None) -> None:
    """Raise ``LLMError`` with a clear message if litellm cannot route ``model`` (an alias
    is looked up first) or its api base does not answer."""
    if not model or not model.strip():
        raise LLMError("empty model name")
    route = route_of(model, api_base, settings=settings)
    model = route.model
    if model.startswith("local/"):  # known without importing litellm (2-3 s)
        from memory.llm.local import LOCAL_MODELS, LocalModelError, local_context_window

        name = model.split("/", 1)[1]
        if name not in LOCAL_MODELS:
            raise LLMError(
                f"unknown local model {model!r}; embedded: "
                + ", ".join(f"local/{n}" for n in LOCAL_MODELS)
            )
        try:
            local_context_window()
        except LocalModelError as exc:
            raise LLMError(str(exc)) from None
        return
    try:
        import_litellm().get_llm_provider(model)
    except Exception as exc:
        raise LLMError(
            f"unknown model {model!r}: not an alias in {(settings or current()).config_path} "
            "and litellm cannot tell its provider (use provider/name, e.g. openai/gpt-4o-mini or "
            "ollama/qwen2.5-coder)"
        ) from exc
    try:
        probe(route)
    except ModelConfigError as exc:
        raise LLMError(str(exc)) from None


def parse_timeout(value: object) -> float:
    """``value`` as a timeout in seconds (a positive, finite number); ValueError if not."""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = float("nan")
    if isinstance(value, bool) or not 0 < seconds < float("inf"):
        raise ValueError(f"a timeout is a positive number of seconds, not {value!r:.40}")
    return seconds


@dataclass(frozen=True)
class LLMConfig:
    """How calls to one model are made."""

    model: str = LOCAL_DEFAULT
    timeout: float = DEFAULT_TIMEOUT  # seconds per try (per chunk gap when streaming)
    retries: int = 3
    backoff: float = 1.0  # first retry delay in seconds, doubled each time
    max_tokens: int = 512
    temperature: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    structured: str | None = None  # force a structured mode (see memory/llm/structured.py)
    api_base: str | None = None  # the server's base URL (else an alias's, the settings')
    settings: Settings | None = None  # the process's (memory.settings); None: current()


class LLM(StructuredCalls):
    """A model reached through litellm, with a usage ledger shared by its callers."""

    def __init__(self, config: LLMConfig | None = None, ledger: Usage | None = None,
                 stats: StructuredStats | None = None) -> None:
        self.config = config or LLMConfig()
        self.ledger = ledger if ledger is not None else Usage()
        self.stats = stats if stats is not None else StructuredStats()
        self._mode: str | None = None
        self.settings = self.config.settings or current()
        self.route = route_of(self.config.model, self.config.api_base, self.config.structured,
                              self.settings)

    @property
    def model(self) -> str:
        """The model as named (a litellm string or a config alias): what transcripts keep."""
        return self.config.model

    @property
    def target(self) -> str:
        """The litellm model string calls are made with."""
        return self.route.model

    def with_model(self, model: str) -> LLM:
        """The same settings and ledger, another model (checked first)."""
        check_model(model, settings=self.settings)
        cfg = LLMConfig(**{**self.config.__dict__, "model": model, "api_base": None,
                           "structured": None})  # the new model's own route
        return LLM(cfg, self.ledger, self.stats)

    # -- token accounting -------------------------------------------------
    @property
    def embedded(self) -> bool:
        """An embedded model (``local/NAME``): called without litellm (memory.llm.local_calls)."""
        return self.target.startswith("local/")

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's tokenizer; the same sections are counted by
        every turn's budget, so recent counts of texts up to ``COUNTED_CHARS`` are kept
        (``COUNTS_KEPT``)."""
        if not text:
            return 0
        key = (self.target, text) if len(text) <= COUNTED_CHARS else None
        known = _counts.get(key) if key is not None else None
        if known is not None:
            return known
        if self.embedded:
            from memory.llm import local_calls

            tokens = local_calls.count_tokens(self.target, text)
        else:
            tokens = int(import_litellm().token_counter(model=self.target, text=text))
        if key is not None:
            _counts.put(key, tokens)
        return tokens

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        if self.embedded:
            from memory.llm import local_calls

            return local_calls.count_messages(self.target, messages)
        return int(import_litellm().token_counter(model=self.target, messages=messages))

    async def _acompletion(self, **kwargs: Any) -> Any:
        """litellm's ``acompletion``; for the embedded model the same call without litellm."""
        if self.embedded:
            from memory.llm import local_calls

            return await local_calls.acompletion(**kwargs)
        return await import_litellm().acompletion(**kwargs)

    def context_window(self) -> int:
        if self.embedded:
            from memory.llm.local import local_context_window

            return local_context_window()
        try:
            info = import_litellm().get_model_info(self.target)
            return int(info.get("max_input_tokens") or info.get("max_tokens") or FALLBACK_WINDOW)
        except Exception:
            return FALLBACK_WINDOW

    def _record(self, purpose: str, messages: list[dict[str, Any]], text: str,
                usage: Any, response: Any = None) -> None:
        prompt = getattr(usage, "prompt_tokens", None) if usage is not None else None
        completion = getattr(usage, "completion_tokens", None) if usage is not None else None
        if prompt is None:
            prompt = self.count_messages(messages)
        if completion is None:
            completion = self.count_tokens(text)
        cost = 0.0
        if not self.embedded and priced_as(self.target) is not None:
            try:  # the response's own price (cached tokens...), else by its token counts
                cost = float(import_litellm().completion_cost(completion_response=response)) \
                    if response is not None else price(self.target, int(prompt), int(completion))
            except Exception:
                cost = price(self.target, int(prompt), int(completion))
        self.ledger.add(purpose, int(prompt), int(completion), cost)

    def _kwargs(self, messages: list[dict[str, Any]], max_tokens: int | None,
                temperature: float | None, stream: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.target,
            "messages": messages,
            "max_tokens": max_tokens or self.config.max_tokens,
            "temperature": self.config.temperature if temperature is None else temperature,
            "timeout": self.config.timeout,
            "num_retries": 0,  # we retry ourselves, with backoff and a clear error
            **self.config.extra,
        }
        if self.route.api_base:
            kwargs["api_base"] = self.route.api_base
        try:
            key = self.route.api_key()  # read now, never kept
        except ModelConfigError as exc:
            raise LLMError(str(exc)) from None
        if key is None and self.route.served and self.route.provider in OPENAI_LIKE \
                and "OPENAI_API_KEY" not in self.settings.keys:
            key = "no-key"  # the OpenAI client insists on one; a local server takes any
        if key is not None:
            kwargs["api_key"] = key
        if stream:
            kwargs["stream"] = True
            if not self.embedded:
                kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    async def _sleep_before_retry(self, attempt: int) -> None:
        delay = self.config.backoff * (2**attempt)
        await asyncio.sleep(delay * (0.8 + 0.4 * random.random()))

    # -- calls ---------------------------------------------------------------
    async def complete(self, messages: list[dict[str, Any]], *, purpose: str = "answer",
                       max_tokens: int | None = None, temperature: float | None = None,
                       response_format: dict[str, Any] | None = None,
                       structured_as: str | None = None, **extra: Any) -> str:
        """One completion; returns its text. Raises ``LLMError`` when all tries fail.

        ``structured_as`` names the structured mode ``response_format`` / ``extra``
        carry: a refusal of that request raises ``structured.FormatRefused`` at once,
        never retried as it is."""
        last = ""
        kwargs = self._kwargs(messages, max_tokens, temperature, False)
        if response_format is not None:
            kwargs["response_format"] = response_format
        kwargs.update(extra)
        for attempt in range(self.config.retries + 1):
            await _wait_gate(self.model)
            try:
                response = await asyncio.wait_for(
                    self._acompletion(**kwargs), timeout=self.config.timeout,
                )
                text = response.choices[0].message.content or ""
            except Exception as exc:
                if structured_as and structured.is_refusal(exc):
                    raise structured.FormatRefused(structured_as, brief(exc)) from exc
                reason, retryable = classify(exc)
                last = f"{self.model}: {reason}: {brief(exc)}"
                if retryable and attempt < self.config.retries:
                    log.warning("LLM call failed (%s); retry %d", reason, attempt + 1)
                    await self._sleep_before_retry(attempt)
                    continue
                raise LLMError(last, retryable=retryable) from exc
            self._record(purpose, messages, text, getattr(response, "usage", None), response)
            return text
        raise LLMError(last)  # pragma: no cover - the loop always returns or raises

    async def stream(self, messages: list[dict[str, Any]], *, purpose: str = "answer",
                     on_token: Callable[[str], None] | None = None,
                     max_tokens: int | None = None, temperature: float | None = None) -> str:
        """Stream a completion, calling ``on_token`` per piece; returns the whole text.

        A failure before the first piece is retried; after it, ``LLMError.partial``
        keeps what arrived so the caller loses nothing.
        """
        last = ""
        for attempt in range(self.config.retries + 1):
            parts: list[str] = []
            usage = None
            await _wait_gate(self.model)
            try:
                response = await asyncio.wait_for(
                    self._acompletion(**self._kwargs(messages, max_tokens, temperature, True)),
                    timeout=self.config.timeout,
                )
                iterator = response.__aiter__()
                while True:
                    try:
                        chunk = await asyncio.wait_for(
                            iterator.__anext__(), timeout=self.config.timeout
                        )
                    except StopAsyncIteration:
                        break
                    usage = getattr(chunk, "usage", None) or usage
                    choices = getattr(chunk, "choices", None)
                    if choices is None:
                        raise ValueError(f"malformed stream chunk: {chunk!r:.200}")
                    if not choices:
                        continue
                    piece = getattr(choices[0].delta, "content", None) or ""
                    if piece:
                        parts.append(piece)
                        if on_token is not None:
                            on_token(piece)
            except Exception as exc:
                reason, retryable = classify(exc)
                if isinstance(exc, ValueError | AttributeError | TypeError):
                    reason, retryable = "malformed stream", True
                last = f"{self.model}: {reason}: {brief(exc)}"
                partial = "".join(parts)
                if retryable and not parts and attempt < self.config.retries:
                    log.warning("LLM stream failed (%s); retry %d", reason, attempt + 1)
                    await self._sleep_before_retry(attempt)
                    continue
                if partial:
                    self._record(purpose, messages, partial, None)
                raise LLMError(last, partial=partial, retryable=retryable) from exc
            text = "".join(parts)
            self._record(purpose, messages, text, usage)
            return text
        raise LLMError(last)  # pragma: no cover


__all__ = ["DEFAULT_TIMEOUT", "LLM", "LOCAL_DEFAULT", "LLMConfig", "LLMError",
           "StructuredOutputError", "check_model", "default_model", "import_litellm",
           "parse_timeout", "price", "priced_as", "route_of", "set_rate_gate"]
