"""How a structured call asks its endpoint for JSON, and what to do when it is refused.

The modes, strongest first (what the request carries besides the messages):

- ``grammar``: the embedded model; the whole schema becomes a llama.cpp grammar.
- ``schema``: OpenAI's ``response_format: {"type": "json_schema", ...}`` (vLLM, LM Studio,
  SGLang, llama.cpp's C++ server, Ollama's /v1, the big providers).
- ``schema_object``: llama.cpp's ``{"type": "json_object", "schema": ...}``
  (llama-cpp-python's server decodes under it); the whole schema, as ``grammar`` gets.
- ``ollama_format``: Ollama's ``format`` field holding the schema.
- ``json``: JSON mode (``{"type": "json_object"}``): valid JSON, any shape.
- ``prompt``: nothing but the schema in the prompt.

Every mode below ``schema`` also puts the schema in the prompt: a server that accepts a
field and ignores it still leaves the model told what to write. A model on a server
the developer runs (memory/models.Route.served) starts at ``schema`` (or what worked
last time) and steps down one mode per refusal; the mode that answered is kept per
(model, api base) in the user cache, so later sessions start there.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from typing import Any

from memory.home import cache_dir
from memory.llm._schema import portable, schema_instruction
from memory.llm.models import OLLAMA, Route

LADDER = ("schema", "schema_object", "ollama_format", "json", "prompt")
CONSTRAINED = frozenset({"grammar", "schema", "schema_object", "ollama_format"})
CACHE_FILE = "structured-modes.json"
# words a server's refusal uses when it is the structured-output request it refuses
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar",
                 "format")
_lock = threading.Lock()
_memo: dict[str, str] = {}


class FormatRefused(Exception):
    """The endpoint refused the structured-output request itself (not the prompt)."""

    def __init__(self, mode: str, detail: str) -> None:
        super().__init__(f"{mode} refused: {detail}")
        self.mode = mode
        self.detail = detail


def ladder(start: str) -> list[str]:
    """The modes to try from ``start`` down (``start`` alone if it is not on the ladder)."""
    return list(LADDER[LADDER.index(start):]) if start in LADDER else [start]


def told(mode: str, schema: dict[str, Any]) -> str:
    """The words a structured call in ``mode`` adds to the system prompt about the schema
    ("" in the modes that send the schema in the request alone): what ``request`` adds,
    for those that count a request's tokens before making it."""
    return "" if mode in ("grammar", "schema") else schema_instruction(schema)


def request(mode: str, schema: dict[str, Any], name: str,
            route: Route) -> tuple[dict[str, Any], str | None]:
    """The call's extra arguments for ``mode``, and the text to add to the system prompt."""
    if mode == "grammar":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": schema, "strict": True}}}, None
    sent = portable(schema)
    if mode == "schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": sent, "strict": True}}}, None
    told = schema_instruction(schema)
    if mode == "schema_object":  # llama.cpp builds its grammar from all of it, lengths too
        return {"response_format": {"type": "json_object", "schema": schema}}, told
    if mode == "ollama_format":
        if route.provider in OLLAMA:
            return {"format": sent}, told
        return {"extra_body": {"format": sent}}, told
    if mode == "json":
        return {"response_format": {"type": "json_object"}}, told
    return {}, told


def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is the endpoint refusing the structured-output request: a 400, 415
    or 422 (not an over-long prompt), or any other 4xx/5xx whose message names the
    response format, schema or grammar; or litellm refusing the parameter itself."""
    kind = type(exc).__name__
    if kind in ("AuthenticationError", "PermissionDeniedError", "NotFoundError",
                "RateLimitError", "ContextWindowExceededError", "Timeout",
                "APIConnectionError", "TimeoutError", "CancelledError"):
        return False
    if kind == "UnsupportedParamsError":
        return True
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or not 400 <= status < 600 \
            or status in (401, 403, 404, 408, 429):
        return False
    text = str(exc).lower()
    if any(w in text for w in ("context window", "context length", "maximum context",
                               "exceed", "too long")) \
            and not any(w in text for w in _FORMAT_WORDS[:5]):
        return False
    if status in (400, 415, 422):
        return True
    return any(w in text for w in _FORMAT_WORDS)


# -- the cache of what worked --------------------------------------------------------------
def cache_key(route: Route) -> str:
    return f"{route.model} @ {route.endpoint or '-'}"


def _cache_path() -> Any:
    return cache_dir() / CACHE_FILE


def learned_modes() -> dict[str, dict[str, Any]]:
    """Everything the cache holds: key -> {model, api_base, mode, refused, learned}."""
    try:
        data = json.loads(_cache_path().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and v.get("mode") in LADDER} \
        if isinstance(data, dict) else {}


def learned(route: Route) -> str | None:
    """The mode that last worked for this (model, api base), or None."""
    key = cache_key(route)
    with _lock:
        if key not in _memo:
            entry = learned_modes().get(key)
            if entry is None:
                return None
            _memo[key] = entry["mode"]
        return _memo[key]


def remember(route: Route, mode: str, refused: list[str]) -> None:
    """Keep ``mode`` as the one that works for this route (atomically; no key is kept)."""
    key = cache_key(route)
    with _lock:
        if _memo.get(key) == mode and not refused:
            return
        _memo[key] = mode
        data = learned_modes()
        data[key] = {"model": route.model, "api_base": route.endpoint, "mode": mode,
                     "refused": refused, "learned": time.strftime("%Y-%m-%dT%H:%M:%S")}
        path = _cache_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".modes-")
            with os.fdopen(fd, "w") as out:
                json.dump(data, out, indent=2)
            os.replace(tmp, path)
        except OSError:  # a cache: a read-only home costs a step-down next time, nothing more
            pass


def forget(route: Route | None = None) -> int:
    """Drop what was learned (for one route, or all); returns how many entries went."""
    with _lock:
        data = learned_modes()
        keys = [cache_key(route)] if route is not None else list(data)
        gone = [k for k in keys if data.pop(k, None) is not None]
        for k in keys:
            _memo.pop(k, None)
        if gone:
            with contextlib.suppress(OSError):
                _cache_path().write_text(json.dumps(data, indent=2))
        return len(gone)
