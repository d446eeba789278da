"""The structured-output half of ``memory.llm.client.LLM`` (a mixin): which mode a call uses,
the step-down on a refusal, the corrective retry, the counters. memory/llm/structured.py
holds what each mode sends and the cache of what worked."""

from __future__ import annotations

import logging
from typing import Any

from memory.llm import structured
from memory.llm._litellm import LLMError, StructuredOutputError, import_litellm
from memory.llm._schema import MalformedJSON, SchemaError, parse_answer, retry_message

log = logging.getLogger("memory.llm.client")


class StructuredCalls:
    """``complete_json`` / ``ask_json`` for a class with ``route``, ``stats``, ``_mode``,
    ``embedded``, ``target``, ``model`` and ``complete`` (memory.llm.client.LLM)."""

    route: Any
    stats: Any
    _mode: str | None
    embedded: bool
    target: str
    model: str
    complete: Any

    def structured_mode(self) -> str:
        """How this model is asked for structure next (memory/llm/structured.py lists the
        modes): a forced one, else ``grammar`` for the embedded model, what worked last
        time for a served model (``schema`` at first), else what litellm knows the
        provider takes."""
        if self.route.structured:
            return self.route.structured
        if self._mode is None:
            self._mode = self._detect_mode()
        return self._mode

    def constrained(self) -> bool:
        """Whether the model decodes under the schema (the embedded model's grammar, a
        provider's JSON-Schema mode, a server's schema field): then ``enum`` can limit
        its choices."""
        return self.structured_mode() in structured.CONSTRAINED

    def _detect_mode(self) -> str:
        if self.embedded:
            return "grammar"
        if self.route.served:
            return structured.learned(self.route) or "schema"
        litellm = import_litellm()
        try:
            if litellm.supports_response_schema(model=self.target):
                return "schema"
        except Exception:
            pass
        try:
            if "response_format" in (litellm.get_supported_openai_params(model=self.target)
                                     or []):
                return "json"
        except Exception:
            pass
        return "prompt"

    async def complete_json(self, messages: list[dict[str, Any]], schema: dict[str, Any], *,
                            purpose: str = "memory", name: str = "answer",
                            max_tokens: int | None = None) -> Any:
        """The one structured-output path: a JSON value valid against ``schema``.

        The request carries the schema in the strongest form the endpoint takes
        (memory/llm/structured.py): a grammar on the embedded model, a provider's or
        server's schema mode, JSON mode, the prompt. A refusal of that form steps down
        one mode at once (a forced mode is not stepped down: its refusal is an error);
        a served model's working mode is remembered in the user cache. An answer that
        does not parse or validate gets one corrective retry showing the error; then
        ``StructuredOutputError``. Temperature 0. Every call is counted in ``self.stats``.

        For the embedded model, prefer ``enum``, ``const`` and ``pattern`` to bounded
        lengths (``maxLength``, large ``maxItems``): llama.cpp expands a bounded repeat
        into nested rules, and decoding under them is many times slower.
        """
        start = self.structured_mode()
        forced = bool(self.route.structured)
        self.stats.add(calls=1)
        refused: list[str] = []
        for mode in [start] if forced else structured.ladder(start):
            try:
                return await self._structured_call(mode, messages, schema, purpose, name,
                                                   max_tokens, refused)
            except structured.FormatRefused as exc:
                self.stats.add(refused=1)
                refused.append(mode)
                if forced:
                    self.stats.add(failed=1)
                    raise LLMError(f"{self.model}: the endpoint refused the structured mode "
                                   f"{mode} (forced; try another with --structured): "
                                   f"{exc.detail}") from exc
                log.warning("%s: structured mode %s refused; stepping down", self.model, mode)
        self.stats.add(failed=1)
        raise LLMError(f"{self.model}: the endpoint refused every structured mode "
                       f"({', '.join(refused)})")

    def _learn(self, mode: str, refused: list[str]) -> None:
        if self.route.structured or mode == "grammar":
            return
        self._mode = mode
        if self.route.served:
            structured.remember(self.route, mode, refused)

    async def _structured_call(self, mode: str, messages: list[dict[str, Any]],
                               schema: dict[str, Any], purpose: str, name: str,
                               max_tokens: int | None, refused: list[str]) -> Any:
        """One structured call in ``mode``: the request, one corrective retry, the value."""
        messages = [dict(m) for m in messages]
        extra, told = structured.request(mode, schema, name, self.route)
        if told:
            _add_to_system(messages, told)
        error: Exception | None = None
        for attempt in range(2):
            text = await self.complete(messages, purpose=purpose, max_tokens=max_tokens,
                                       temperature=0.0, structured_as=mode, **extra)
            if attempt == 0:  # the endpoint took this mode
                self.stats.add(**{mode: 1})
                self._learn(mode, refused)
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


def _add_to_system(messages: list[dict[str, Any]], text: str) -> None:
    """Append ``text`` to the system message (one is added when there is none)."""
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = f"{messages[0].get('content') or ''}\n\n{text}"
    else:
        messages.insert(0, {"role": "system", "content": text})
