"""engram's settings as one frozen value, built once from the config file, the
environment and the command line's flags, in that order (a later source wins).

This is the only module under ``memory/`` that reads ``os.environ`` for a setting
(tests/test_settings_scan.py checks it). A front-end builds the value with ``load``
(its flags given), and passes it down: to the session builder, to ``LLMConfig``, in
replay's config (to Ray workers). ``install`` makes it the one a library function
reads with ``current()`` when no value was handed to it; outside a front-end
(a library caller, a test), ``current()`` is the environment and the config file as
they are now.

Raw values of the embedded model's and the embedder's settings are kept as given
(strings): the module using one checks it and says what is wrong with it, where it
is used (``memory.llm.local.spec``, ``memory.index.embed``).

Not settings, and left in the process environment on purpose:
- secrets (API keys): read when a call is made (``secret``), never kept in a value
  that is pickled, logged or sent to a worker;
- state a child process needs: the jail's ``ENGRAM_SANDBOX_ROOT`` /
  ``ENGRAM_SANDBOX_NPROC`` and the sandbox runner's ``ENGRAM_RUNNER_FD`` /
  ``ENGRAM_VERDICT_FDS`` (set by the parent for one child, read by that child);
- switches for libraries read at their import (``HF_HUB_OFFLINE``,
  ``TRANSFORMERS_OFFLINE``, ``LITELLM_LOCAL_MODEL_COST_MAP``, ``OMP_WAIT_POLICY``,
  ``TOKENIZERS_PARALLELISM``, ``GIT_PYTHON_REFRESH``): set, never read by engram.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

# field -> the environment variable that sets it
ENV: dict[str, str] = {
    "model": "ENGRAM_MODEL",
    "api_base": "ENGRAM_API_BASE",
    "structured": "ENGRAM_STRUCTURED",
    "data_dir": "ENGRAM_HOME",
    "model_cache": "ENGRAM_CACHE",
    "local_context": "ENGRAM_LOCAL_CONTEXT",
    "local_weights": "ENGRAM_LOCAL_WEIGHTS",
    "llm_threads": "ENGRAM_LLM_THREADS",
    "embed_threads": "ENGRAM_EMBED_THREADS",
    "minilm": "ENGRAM_MINILM",
    "sandbox": "ENGRAM_SANDBOX",
    "claude_dir": "CLAUDE_CONFIG_DIR",
    "codex_dir": "CODEX_HOME",
}
CONFIG_ENV = "ENGRAM_CONFIG"
API_KEY_ENV = "ENGRAM_API_KEY"  # the key of a served model (a secret: read at call time)
# The provider keys whose presence picks a default model (names only; values never kept).
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY")
# Where litellm looks for each served provider's base when none is given.
PROVIDER_BASES = ("OPENAI_API_BASE", "OPENAI_BASE_URL", "HOSTED_VLLM_API_BASE",
                  "LM_STUDIO_API_BASE", "OLLAMA_API_BASE", "LLAMAFILE_API_BASE")
# fields the config file may set (beside its own tables: models, theme, timeout, ...)
FROM_CONFIG = ("model", "api_base", "structured", "local_context", "local_weights",
               "llm_threads", "embed_threads", "minilm", "sandbox")


@dataclass(frozen=True)
class Settings:
    """Every setting of one engram process, and where each came from."""

    model: str = ""  # empty: default_model() picks one (a key's provider, else local)
    api_base: str = ""  # the server of a model without an alias
    structured: str = ""  # a forced structured mode
    data_dir: str = ""  # empty: the platform's user data dir
    config_path: str = ""  # empty: config.json in data_dir, else the user config dir
    model_cache: str = ""  # derived model files (MiniLM's ONNX graph)
    local_context: str = ""  # the embedded model's window, tokens
    local_weights: str = ""  # fast | shipped
    llm_threads: str = ""
    embed_threads: str = ""
    minilm: str = ""  # onnx | torch
    sandbox: str = ""  # weak: no OS jail
    claude_dir: str = ""
    codex_dir: str = ""
    keys: tuple[str, ...] = ()  # provider key variables set (names, never values)
    provider_bases: tuple[tuple[str, str], ...] = ()  # litellm's base variables set
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def source(self, name: str) -> str:
        """Where setting ``name`` came from: ``flag``, ``env $NAME``, ``config file`` or
        ``default``."""
        return dict(self.sources).get(name, "default")

    def provider_base(self, var: str) -> str:
        return dict(self.provider_bases).get(var, "")

    def config(self) -> dict[str, Any]:
        """The config file's content (an empty dict when missing or not a JSON object)."""
        return read_config(Path(self.config_path) if self.config_path else None)


def _config_path(env: Mapping[str, str], data_dir: str) -> tuple[str, str]:
    if env.get(CONFIG_ENV):
        return env[CONFIG_ENV], f"env ${CONFIG_ENV}"
    if data_dir:
        return str(Path(data_dir).expanduser() / "config.json"), f"env ${ENV['data_dir']}"
    from platformdirs import user_config_dir

    return str(Path(user_config_dir("engram")) / "config.json"), "default"


def read_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(flags: Mapping[str, Any] | None = None,
         env: Mapping[str, str] | None = None) -> Settings:
    """The settings of the config file, then the environment (``env``, default: this
    process's), then ``flags`` (field -> value; None or empty: not given)."""
    env = os.environ if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v not in (None, "")}
    unknown = sorted(set(flags) - {f.name for f in fields(Settings)})
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}")
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    # the data dir places the config file: flag, else env (never the config file itself)
    for name in ("data_dir",):
        if flags.get(name):
            values[name], sources[name] = str(flags[name]), "flag"
        elif env.get(ENV[name]):
            values[name], sources[name] = env[ENV[name]], f"env ${ENV[name]}"
    if flags.get("config_path"):
        values["config_path"], sources["config_path"] = str(flags["config_path"]), "flag"
    else:
        # ``$ENGRAM_HOME`` places it, ``--data-dir`` does not (a data dir for one run)
        values["config_path"], sources["config_path"] = _config_path(
            env, env.get(ENV["data_dir"], ""))
    config = read_config(Path(values["config_path"]).expanduser())
    for name in FROM_CONFIG:
        if config.get(name) not in (None, ""):
            values[name], sources[name] = str(config[name]), "config file"
    for name, var in ENV.items():
        if name != "data_dir" and env.get(var, "").strip():
            values[name], sources[name] = env[var].strip(), f"env ${var}"
    for name, value in flags.items():
        if name != "data_dir":
            values[name], sources[name] = str(value), "flag"
    return Settings(**values,
                    keys=tuple(k for k in PROVIDER_KEYS if env.get(k)),
                    provider_bases=tuple((v, env[v].rstrip("/")) for v in PROVIDER_BASES
                                         if env.get(v)),
                    sources=tuple(sorted(sources.items())))


def secret(name: str) -> str | None:
    """The secret in ``$name`` (an API key), read now and never kept."""
    return os.environ.get(name) or None


_installed: Settings | None = None


def current() -> Settings:
    """The settings a front-end installed, else the environment and config file now."""
    return _installed if _installed is not None else load()


def install(settings: Settings) -> Settings:
    """Make ``settings`` the process's (until the enclosing ``scope`` ends)."""
    global _installed
    _installed = settings
    return settings


@contextmanager
def scope(settings: Settings | None = None) -> Iterator[None]:
    """Settings installed inside the block (``settings``, or what the block installs)
    are undone at its end: a command run in-process leaves none behind."""
    global _installed
    before = _installed
    if settings is not None:
        _installed = settings
    try:
        yield
    finally:
        _installed = before


__all__ = ["API_KEY_ENV", "ENV", "Settings", "current", "install", "load", "read_config",
           "scope", "secret"]
