"""Every LLM call engram makes goes through here, and through litellm (the embedded
model's go straight to it, ``memory.local_calls``: no litellm import for offline use).

One ``LLM`` per model: completion and streaming with a timeout and retries with
backoff, a usage ledger split by purpose, token counting, the model's window.
litellm is imported on first use (it takes seconds), never at module import.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from memory._schema import (
    MalformedJSON,
    SchemaError,
    StructuredStats,
    parse_answer,
    portable,
    retry_message,
    schema_instruction,
)
from memory.redact import redact
from memory.types import Usage

log = logging.getLogger(__name__)

LOCAL_DEFAULT = "local/smollm2"
# The first provider key found in the environment picks that provider's small model.
KEYED_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("OPENAI_API_KEY", "openai/gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-3-5-haiku-latest"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("GEMINI_API_KEY", "gemini/gemini-2.0-flash"),
)
FALLBACK_WINDOW = 8192
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


class LLMError(RuntimeError):
    """An LLM call failed for good; ``partial`` holds any text streamed before the failure."""

    def __init__(self, message: str, *, partial: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.partial = partial
        self.retryable = retryable


class StructuredOutputError(LLMError):
    """A structured call's answer did not validate, even after the corrective retry."""


def default_model(env: dict[str, str] | None = None) -> str:
    """The model engram uses when none is given."""
    env = dict(os.environ) if env is None else env
    if env.get("ENGRAM_MODEL"):
        return env["ENGRAM_MODEL"]
    for key, model in KEYED_DEFAULTS:
        if env.get(key):
            return model
    return LOCAL_DEFAULT


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
        from memory.local import register_local_provider

        register_local_provider()
        _litellm = litellm
    return _litellm


def check_model(model: str) -> None:
    """Raise ``LLMError`` with a clear message if litellm cannot route ``model``."""
    if not model or not model.strip():
        raise LLMError("empty model name")
    if model.startswith("local/"):  # known without importing litellm (2-3 s)
        from memory.local import LOCAL_MODELS, LocalModelError, local_context_window

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
            f"unknown model {model!r}: litellm cannot tell its provider "
            "(use provider/name, e.g. openai/gpt-4o-mini or ollama/qwen2.5-coder)"
        ) from exc


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
    structured: str | None = None  # force a structured mode (see memory/_schema.MODES)


def _classify(exc: BaseException) -> tuple[str, bool]:
    """A short reason for an exception from litellm, and whether a retry may help."""
    from memory.local import LocalModelError

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
    litellm = import_litellm()
    for name in dict.fromkeys((model, model.split("/", 1)[-1])):
        try:
            litellm.cost_per_token(model=name, prompt_tokens=1, completion_tokens=1)
        except Exception:
            continue
        return name
    return None


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """Dollars for these tokens by litellm's cost map; $0 for a model it does not price."""
    name = priced_as(model)
    if name is None:
        return 0.0
    costs = import_litellm().cost_per_token(model=name, prompt_tokens=prompt_tokens,
                                            completion_tokens=completion_tokens)
    return float(sum(costs))


class LLM:
    """A model reached through litellm, with a usage ledger shared by its callers."""

    def __init__(self, config: LLMConfig | None = None, ledger: Usage | None = None,
                 stats: StructuredStats | None = None) -> None:
        self.config = config or LLMConfig()
        self.ledger = ledger if ledger is not None else Usage()
        self.stats = stats if stats is not None else StructuredStats()
        self._mode: str | None = None

    @property
    def model(self) -> str:
        return self.config.model

    def with_model(self, model: str) -> LLM:
        """The same settings and ledger, another model (checked first)."""
        check_model(model)
        cfg = LLMConfig(**{**self.config.__dict__, "model": model})
        return LLM(cfg, self.ledger, self.stats)

    # -- token accounting -------------------------------------------------
    @property
    def embedded(self) -> bool:
        """An embedded model (``local/NAME``): called without litellm (memory.local_calls)."""
        return self.model.startswith("local/")

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        if self.embedded:
            from memory import local_calls

            return local_calls.count_tokens(self.model, text)
        return int(import_litellm().token_counter(model=self.model, text=text))

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        if self.embedded:
            from memory import local_calls

            return local_calls.count_messages(self.model, messages)
        return int(import_litellm().token_counter(model=self.model, messages=messages))

    async def _acompletion(self, **kwargs: Any) -> Any:
        """litellm's ``acompletion``; for the embedded model the same call without litellm."""
        if self.embedded:
            from memory import local_calls

            return await local_calls.acompletion(**kwargs)
        return await import_litellm().acompletion(**kwargs)

    def context_window(self) -> int:
        if self.model.startswith("local/"):
            from memory.local import local_context_window

            return local_context_window()
        try:
            info = import_litellm().get_model_info(self.model)
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
        if not self.model.startswith("local/"):
            try:  # the response's own price (cached tokens...), else by its token counts
                cost = float(import_litellm().completion_cost(completion_response=response)) \
                    if response is not None else price(self.model, int(prompt), int(completion))
            except Exception:
                cost = price(self.model, int(prompt), int(completion))
        self.ledger.add(purpose, int(prompt), int(completion), cost)

    def structured_mode(self) -> str:
        """How this model is asked for structure: ``grammar`` (embedded model), ``schema``
        (provider's JSON-Schema mode), ``json`` (JSON mode) or ``prompt``."""
        if self.config.structured:
            return self.config.structured
        if self._mode is None:
            self._mode = self._detect_mode()
        return self._mode

    def constrained(self) -> bool:
        """Whether the model decodes under the schema (the embedded model's grammar, a
        provider's strict JSON-Schema mode): then ``enum`` can limit its choices."""
        return self.structured_mode() in ("grammar", "schema")

    def _detect_mode(self) -> str:
        if self.model.startswith("local/"):
            return "grammar"
        litellm = import_litellm()
        try:
            if litellm.supports_response_schema(model=self.model):
                return "schema"
        except Exception:
            pass
        try:
            if "response_format" in (litellm.get_supported_openai_params(model=self.model) or []):
                return "json"
        except Exception:
            pass
        return "prompt"

    def _kwargs(self, messages: list[dict[str, Any]], max_tokens: int | None,
                temperature: float | None, stream: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens or self.config.max_tokens,
            "temperature": self.config.temperature if temperature is None else temperature,
            "timeout": self.config.timeout,
            "num_retries": 0,  # we retry ourselves, with backoff and a clear error
            **self.config.extra,
        }
        if stream:
            kwargs["stream"] = True
            if not self.model.startswith("local/"):
                kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    async def _sleep_before_retry(self, attempt: int) -> None:
        delay = self.config.backoff * (2**attempt)
        await asyncio.sleep(delay * (0.8 + 0.4 * random.random()))

    # -- calls ---------------------------------------------------------------
    async def complete(self, messages: list[dict[str, Any]], *, purpose: str = "answer",
                       max_tokens: int | None = None, temperature: float | None = None,
                       response_format: dict[str, Any] | None = None) -> str:
        """One completion; returns its text. Raises ``LLMError`` when all tries fail."""
        last = ""
        kwargs = self._kwargs(messages, max_tokens, temperature, False)
        if response_format is not None:
            kwargs["response_format"] = response_format
        for attempt in range(self.config.retries + 1):
            await _wait_gate(self.model)
            try:
                response = await asyncio.wait_for(
                    self._acompletion(**kwargs), timeout=self.config.timeout,
                )
                text = response.choices[0].message.content or ""
            except Exception as exc:
                reason, retryable = _classify(exc)
                last = f"{self.model}: {reason}: {_brief(exc)}"
                if retryable and attempt < self.config.retries:
                    log.warning("LLM call failed (%s); retry %d", reason, attempt + 1)
                    await self._sleep_before_retry(attempt)
                    continue
                raise LLMError(last, retryable=retryable) from exc
            self._record(purpose, messages, text, getattr(response, "usage", None), response)
            return text
        raise LLMError(last)  # pragma: no cover - the loop always returns or raises

    async def complete_json(self, messages: list[dict[str, Any]], schema: dict[str, Any], *,
                            purpose: str = "memory", name: str = "answer",
                            max_tokens: int | None = None) -> Any:
        """The one structured-output path: a JSON value valid against ``schema``.

        The embedded model decodes under a grammar built from the schema; an API model
        gets litellm's ``response_format`` with the schema where it supports that,
        JSON mode where it supports only that, else the schema in the prompt. An answer
        that does not parse or validate gets one corrective retry showing the error;
        then ``StructuredOutputError``. Temperature 0. Every call is counted in
        ``self.stats``.

        For the embedded model, prefer ``enum``, ``const`` and ``pattern`` to bounded
        lengths (``maxLength``, large ``maxItems``): llama.cpp expands a bounded repeat
        into nested rules, and decoding under them is many times slower.
        """
        mode = self.structured_mode()
        self.stats.add(calls=1, **{mode: 1})
        messages = [dict(m) for m in messages]
        response_format: dict[str, Any] | None = None
        if mode in ("schema", "grammar"):
            sent = schema if mode == "grammar" else portable(schema)
            response_format = {"type": "json_schema",
                               "json_schema": {"name": name, "schema": sent, "strict": True}}
        if mode in ("json", "prompt"):
            _add_to_system(messages, schema_instruction(schema))
        if mode == "json":
            response_format = {"type": "json_object"}
        error: Exception | None = None
        for attempt in range(2):
            text = await self.complete(messages, purpose=purpose, max_tokens=max_tokens,
                                       temperature=0.0, response_format=response_format)
            try:
                value, lenient = parse_answer(text, schema)
            except (MalformedJSON, SchemaError) as exc:
                error = exc
                if attempt == 0:
                    self.stats.add(retries=1)
                    messages += [{"role": "assistant", "content": text[:2000]},
                                 {"role": "user", "content": retry_message(exc)}]
                continue
            self.stats.add(parsed=1, first_try=int(attempt == 0), lenient=int(lenient))
            return value
        self.stats.add(failed=1)
        raise StructuredOutputError(f"{self.model}: no valid JSON after a retry ({mode}): "
                                    f"{error}")

    async def ask_json(self, system: str, user: str, schema: dict[str, Any], *,
                       purpose: str = "memory", name: str = "answer",
                       max_tokens: int | None = None) -> Any:
        """``complete_json`` on a system prompt and one user message."""
        return await self.complete_json(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            schema, purpose=purpose, name=name, max_tokens=max_tokens)

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
                reason, retryable = _classify(exc)
                if isinstance(exc, ValueError | AttributeError | TypeError):
                    reason, retryable = "malformed stream", True
                last = f"{self.model}: {reason}: {_brief(exc)}"
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


def _add_to_system(messages: list[dict[str, Any]], text: str) -> None:
    """Append ``text`` to the system message (one is added when there is none)."""
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = f"{messages[0].get('content') or ''}\n\n{text}"
    else:
        messages.insert(0, {"role": "system", "content": text})


def _brief(exc: BaseException, limit: int = 300) -> str:
    """The first line of a provider's error, redacted: error bodies echo keys and headers."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact(text)[:limit]
