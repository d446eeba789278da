"""The ``engram`` command line's model settings: ``--api-base``, ``--structured``, model
aliases checked before anything opens, ``engram models``, and the structured-output line
printed after a headless answer. Heavy modules are imported inside the functions."""

from __future__ import annotations

import argparse
from typing import Any

from tui.cli_errors import CLIError

API_BASE_HELP = ("the OpenAI-compatible server of --model, e.g. http://localhost:8000/v1 "
                 "(vLLM, llama.cpp, LM Studio, Ollama's /v1); default: $ENGRAM_API_BASE")
STRUCTURED_HELP = ("force how structured answers are asked for: schema, schema_object, "
                   "ollama_format, json, prompt or grammar (default: the strongest the "
                   "endpoint accepts; `engram models` shows what was learned)")


def model_arguments(parser: argparse.ArgumentParser) -> None:
    from memory.llm.models import FORCEABLE

    parser.add_argument("--api-base", default=None, metavar="URL", help=API_BASE_HELP)
    parser.add_argument("--structured", default=None, choices=FORCEABLE, metavar="MODE",
                        help=STRUCTURED_HELP)


def use_model_settings(args: argparse.Namespace) -> Any:
    """The settings of this command (config file, environment, then the flags
    ``--model``, ``--api-base``, ``--structured``), checked and installed
    for the command's scope (``memory.settings.scope`` in ``main``); CLIError on a bad
    URL or mode, or an api base for the embedded model."""
    from memory import settings as engram_settings
    from memory.llm.client import default_model
    from memory.llm.models import ModelConfigError, check_api_base, check_structured

    # --data-dir is not one: it goes to SessionOptions.data_dir, one run's data (the
    # config file and the learned modes' cache stay $ENGRAM_HOME's, as before)
    flags = {"model": getattr(args, "model", None), "api_base": args.api_base,
             "structured": args.structured}
    loaded = engram_settings.load(flags)
    if args.api_base and default_model(loaded).startswith("local/"):
        raise CLIError("--api-base points at a server: name its model with --model, e.g. "
                       "--model openai/NAME (or an alias from the config)")
    try:
        if args.api_base:
            check_api_base(args.api_base)
        if args.structured:
            check_structured(args.structured)
    except ModelConfigError as exc:
        raise CLIError(str(exc)) from exc
    return engram_settings.install(loaded)


def check_model_quickly(model: str | None) -> None:
    """CLIError for an alias that does not exist, a malformed alias or an api base that
    does not answer; litellm (seconds to import) only for a name without a provider."""
    from memory.llm.client import LLMError, check_model, route_of
    from memory.llm.models import ModelConfigError, probe

    if not model:
        return
    try:
        if "/" not in model and route_of(model).model == model:
            check_model(model)  # not an alias: litellm may still know a bare name
        else:
            probe(route_of(model))
    except (LLMError, ModelConfigError) as exc:
        raise CLIError(str(exc)) from exc


def structured_summary(agent: Any, console: Any) -> None:
    """One dim line on stderr: the session's structured calls, the mode that answered
    them, refusals stepped down from, memory updates skipped."""
    from tui.inspection import structured_note

    note = structured_note(agent)
    if note:
        console.print(f"[dim]{note}[/dim]", highlight=False, soft_wrap=True)


def _loaded_as(name: str, layout: str | None) -> str:
    """The line saying which copy of an installed embedded model's weights loads."""
    from memory.llm.local import LocalModelError
    from memory.llm.local.weights import converted_path, weights_choice

    try:
        copy = converted_path(name) if weights_choice() == "fast" else None
    except LocalModelError as exc:
        return f"\n  unusable setting: {exc}"
    if copy is None:
        return ""
    made = "" if copy.is_file() else ", made on first use"
    return (f"\n  loaded as {copy} ({layout}{made}; "
            "ENGRAM_LOCAL_WEIGHTS=shipped loads the file above)")


def cmd_models(args: argparse.Namespace) -> int:
    """The embedded models (and whether each can run here), the default model, each
    setting and where it came from, the config's aliases and the structured modes
    learned from servers."""
    use_model_settings(args)
    from memory.llm.client import default_model
    from memory.llm.local import (
        LOCAL_MODELS,
        MODEL_CONTEXT_LENGTH,
        LocalModelError,
        engine_available,
        gguf_path,
        local_context_window,
        local_threads,
    )

    engine = engine_available()
    for name, spec in LOCAL_MODELS.items():
        try:
            where = str(gguf_path(name))
            state = "installed" if engine else "weights installed; llama-cpp-python missing"
            where += _loaded_as(name, spec.fast_layout)
        except LocalModelError as exc:
            where, state = "", f"not installed ({exc})"
        print(f"local/{name:10} {state}\n  {spec.about}" + (f"\n  {where}" if where else ""))
    try:
        window = f"{local_context_window()} tokens"
    except LocalModelError as exc:
        window = f"unusable: {exc}"
    print(f"window of the embedded models: {window} (ENGRAM_LOCAL_CONTEXT, "
          f"up to {MODEL_CONTEXT_LENGTH})")
    try:
        threads = str(local_threads())
    except LocalModelError as exc:
        threads = f"unusable: {exc}"
    print(f"threads of the embedded models: {threads} (ENGRAM_LLM_THREADS)")
    from memory.index.embed import EmbedError, embed_threads, embed_workers

    try:
        embedding = str(embed_threads() or f"one per core ({embed_workers()})")
    except EmbedError as exc:
        embedding = f"unusable: {exc}"
    print(f"threads of the MiniLM embedder: {embedding} (ENGRAM_EMBED_THREADS)")
    print(f"default model: {default_model()}  (ENGRAM_MODEL, an API key, else local/smollm2)")
    _sources()
    _served_models(args)
    return 0


def _sources() -> None:
    """Each setting's value and where it came from (flag, env, config file, default)."""
    from dataclasses import fields

    from memory.settings import Settings, current

    settings = current()
    print("settings (config file, then environment, then flags: the later wins):")
    for f in fields(Settings):
        if f.name in ("keys", "provider_bases", "sources"):
            continue
        value = getattr(settings, f.name) or "-"
        print(f"  {f.name:14} {value}  ({settings.source(f.name)})")
    keys = ", ".join(settings.keys) or "none"
    print(f"  {'provider keys':14} {keys}  (env; values never shown)")


def _served_models(args: argparse.Namespace) -> None:
    """The config's model aliases and the structured mode learned per (model, api base)."""
    from memory.home import config_path
    from memory.llm import structured
    from memory.llm.models import ModelConfigError, aliases

    if args.forget:
        print(f"forgot {structured.forget()} learned structured mode(s)")
    try:
        table = aliases()
    except ModelConfigError as exc:
        raise CLIError(str(exc)) from exc
    print(f"aliases ({config_path()}, \"models\"):" + ("" if table else " none"))
    for alias, entry in table.items():
        extra = "".join(f", {k} {entry[k]}" for k in ("structured", "api_key_env")
                        if entry.get(k))
        print(f"  {alias:10} {entry['model']} @ {entry.get('api_base') or 'its provider'}"
              + extra)
    learned = structured.learned_modes()
    print("structured modes learned (the strongest each endpoint accepted):"
          + ("" if learned else " none yet"))
    for entry in learned.values():
        refused = f"; refused {', '.join(entry['refused'])}" if entry.get("refused") else ""
        print(f"  {entry['model']} @ {entry['api_base']}: {entry['mode']}{refused} "
              f"({entry.get('learned', '')})")
