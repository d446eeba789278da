"""Which model a name means, and where it is served.

A name is a litellm model string (``openai/qwen2.5-coder-7b``, ``ollama/llama3.1``,
``local/smollm2``) or an alias from the user config::

    {"models": {"coder": {"model": "openai/qwen2.5-coder-7b",
                          "api_base": "http://localhost:8000/v1", "structured": "schema",
                          "api_key_env": "CODER_KEY", "tools": true, "edits": true}}}

A model without an alias takes its api base and forced structured mode from the
settings (``memory.settings``: ``--api-base`` / ``--structured``, else
``$ENGRAM_API_BASE`` / ``$ENGRAM_STRUCTURED``, else the config's ``"api_base"`` /
``"structured"``), handed to ``resolve`` as a value. Keys come from the environment or
a key file only: a config entry named like a key is refused, and no key is ever kept in a ``Route``.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.settings import API_KEY_ENV, Settings, current, secret

# Structured modes a user may force (memory/llm/structured.py explains each).
FORCEABLE = ("schema", "schema_object", "ollama_format", "json", "prompt", "grammar")
# Providers whose endpoint is a server the developer runs (or an OpenAI-compatible proxy).
SERVED = frozenset({"hosted_vllm", "lm_studio", "ollama", "ollama_chat", "llamafile"})
OPENAI_LIKE = frozenset({"openai", "custom_openai", "openai_like"})
OLLAMA = frozenset({"ollama", "ollama_chat"})
# Where litellm looks for each served provider's base when none is given.
_BASE_ENV = {"openai": ("OPENAI_API_BASE", "OPENAI_BASE_URL"),
             "hosted_vllm": ("HOSTED_VLLM_API_BASE",), "lm_studio": ("LM_STUDIO_API_BASE",),
             "ollama": ("OLLAMA_API_BASE",), "ollama_chat": ("OLLAMA_API_BASE",),
             "llamafile": ("LLAMAFILE_API_BASE",)}
_DEFAULT_BASE = {"ollama": "http://localhost:11434", "ollama_chat": "http://localhost:11434",
                 "lm_studio": "http://localhost:1234/v1",
                 "llamafile": "http://127.0.0.1:8080/v1"}
_ALIAS_KEYS = frozenset({"model", "api_base", "structured", "api_key_env", "api_key_file",
                         "tools", "edits"})


class ModelConfigError(ValueError):
    """An alias, api base or structured mode that cannot be used, said plainly."""


@dataclass(frozen=True)
class Route:
    """Where calls for one model name go. Holds where a key is, never the key."""

    name: str  # as the developer gave it (an alias or a model string)
    model: str  # the litellm model string
    api_base: str | None = None  # None: the provider's own endpoint
    structured: str | None = None  # a forced structured mode
    key_env: str | None = None
    key_file: str | None = None
    env_base: str | None = None  # the provider's base litellm reads from the environment

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else ""

    @property
    def served(self) -> bool:
        """A model on a server the developer points at: the structured-mode step-down
        and its cache apply."""
        if self.provider in SERVED:
            return True
        return self.provider in OPENAI_LIKE and bool(self.endpoint)

    @property
    def endpoint(self) -> str | None:
        """The base the calls reach: given, else the one litellm reads from the environment."""
        return self.api_base or self.env_base or _DEFAULT_BASE.get(self.provider)

    def api_key(self) -> str | None:
        """The key for a call, read now from the environment or the key file; None: the
        provider's usual variable (litellm reads it)."""
        if self.key_env:
            value = secret(self.key_env)
            if not value:
                raise ModelConfigError(f"model {self.name!r}: ${self.key_env} is not set")
            return value
        if self.key_file:
            try:
                return Path(self.key_file).expanduser().read_text().strip()
            except OSError as exc:
                raise ModelConfigError(f"model {self.name!r}: cannot read its key file "
                                       f"{self.key_file}: {exc.strerror or exc}") from None
        return secret(API_KEY_ENV) if self.served else None


def aliases(settings: Settings | None = None) -> dict[str, dict[str, Any]]:
    """The config's ``models`` table (alias -> entry), checked; ModelConfigError if malformed."""
    settings = settings or current()
    table = settings.config().get("models", {})
    if not isinstance(table, dict):
        raise ModelConfigError(f"{settings.config_path}: 'models' must be an object of aliases")
    for alias, entry in table.items():
        _check_entry(alias, entry, settings.config_path)
    return table


def _check_entry(alias: str, entry: Any, path: str) -> None:
    where = f"{path}: models.{alias}"
    if not isinstance(entry, dict) or not isinstance(entry.get("model"), str) \
            or not entry["model"].strip():
        raise ModelConfigError(f"{where} needs a \"model\" (a litellm model string)")
    if any("key" in k and k not in ("api_key_env", "api_key_file") for k in entry):
        raise ModelConfigError(f"{where}: keys are never kept in the config; name the "
                               "variable holding it (\"api_key_env\") or a key file "
                               "(\"api_key_file\")")
    unknown = sorted(set(entry) - _ALIAS_KEYS)
    if unknown:
        raise ModelConfigError(f"{where}: unknown setting {', '.join(unknown)} "
                               f"(known: {', '.join(sorted(_ALIAS_KEYS))})")
    if entry.get("api_base") is not None:
        check_api_base(str(entry["api_base"]), where)
    if entry.get("structured") is not None:
        check_structured(str(entry["structured"]), where)
    for offered in ("tools", "edits"):  # what the model is offered (memory/llm/capabilities.py)
        if offered in entry and not isinstance(entry[offered], bool):
            raise ModelConfigError(f"{where}: \"{offered}\" is true or false, not "
                                   f"{entry[offered]!r:.40}")


def check_api_base(url: str, where: str = "--api-base") -> str:
    """``url`` without a trailing slash if it is an http(s) URL; ModelConfigError if not."""
    parsed = urllib.parse.urlparse(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ModelConfigError(f"{where}: {url[:120]!r} is not an http(s) URL "
                               "(e.g. http://localhost:8000/v1)")
    try:
        parsed.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ModelConfigError(f"{where}: {url[:120]!r} has a bad port") from None
    return url.strip().rstrip("/")


def check_structured(mode: str, where: str = "--structured") -> str:
    if mode not in FORCEABLE:
        raise ModelConfigError(f"{where}: unknown structured mode {mode!r} "
                               f"(one of {', '.join(FORCEABLE)})")
    return mode


def resolve(name: str, *, api_base: str | None = None, structured: str | None = None,
            settings: Settings | None = None) -> Route:
    """The route of ``name``: an alias's entry, else ``name`` with ``api_base`` (else the
    settings' api base for a model that is not embedded). ``structured`` given here wins
    over the alias's and the settings' (flag, else environment, else config file)."""
    settings = settings or current()
    name = name.strip()
    entry = aliases(settings).get(name) if name and "/" not in name else None
    mode = settings.structured or None
    if mode:
        check_structured(mode, f"structured ({settings.source('structured')})")
    if entry is not None:
        base = api_base or entry.get("api_base")
        route = Route(name=name, model=entry["model"].strip(),
                      api_base=check_api_base(base) if base else None,
                      structured=structured or entry.get("structured") or mode,
                      key_env=entry.get("api_key_env"), key_file=entry.get("api_key_file"))
    else:
        base = api_base or (None if name.startswith("local/") else settings.api_base or None)
        where = "--api-base" if api_base or settings.source("api_base") == "flag" \
            else f"api base ({settings.source('api_base')})"
        route = Route(name=name, model=name,
                      api_base=check_api_base(base, where) if base else None,
                      structured=structured or mode)
    env_base = next((settings.provider_base(var) for var in _BASE_ENV.get(route.provider, ())
                     if settings.provider_base(var)), None)
    return Route(**{**route.__dict__, "env_base": env_base})


def probe(route: Route, timeout: float = 3.0) -> None:
    """ModelConfigError unless something answers HTTP at the route's given api base (any
    status will do: the server is there); nothing to probe without one."""
    if not route.api_base:
        return
    url = route.api_base + ("/api/tags" if route.provider in OLLAMA else "/models")
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            pass
    except urllib.error.HTTPError:
        return  # an answer: a server is listening there
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ModelConfigError(f"cannot reach the api base {route.api_base} of "
                               f"{route.name!r}: {reason}") from None
