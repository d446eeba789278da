"""The embedded model's weights in a layout llama.cpp reads prompts fast in.

The shipped SmolLM2 GGUF is Q4_1. llama.cpp's CPU backend has no batched kernel for
Q4_1 (no repacked layout, no tinyBLAS path), so prompts, which engram's memories make
long, are read one slow dot product at a time: on one core of the project's machine
84 prompt tokens/s, where the same weights as Q8_0 read 194 (``scripts/bench_weights.py``).
Q8_0 holds every Q4_1 weight nearly exactly (a Q4_1 block has 16 levels, a Q8_0 block
255): over 600 tokens of text the two models' next-token distributions differ by a KL
divergence of 0.0065 nats per token. So on first use the shipped file is converted once
by llama.cpp's own quantizer, in a child process (a crash there costs nothing but the
speed), into engram's cache, and loaded from there; the conversion takes ~1.5 s and
145 MB. ``ENGRAM_LOCAL_WEIGHTS=shipped`` loads the file as shipped.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memory.llm.local.spec import LOCAL_MODELS, LocalModelError, gguf_path

log = logging.getLogger(__name__)

# llama.cpp's file types (llama.h, ``enum llama_ftype``) engram converts to
FILE_TYPES = {"q8_0": 7}
CONVERT_SECONDS = 300  # a conversion that takes longer has gone wrong
CHOICES = ("fast", "shipped")


def weights_choice() -> str:
    """``$ENGRAM_LOCAL_WEIGHTS``: ``fast`` (the default: the converted copy) or
    ``shipped``. Raises ``LocalModelError`` on anything else."""
    from memory.settings import current

    raw = current().local_weights.strip().lower() or "fast"
    if raw not in CHOICES:
        raise LocalModelError(
            f"ENGRAM_LOCAL_WEIGHTS={raw!r}: use one of {', '.join(CHOICES)}")
    return raw


def converted_path(name: str) -> Path | None:
    """Where the converted copy of the embedded model ``name`` lies (or will), in
    engram's cache: named by the shipped file's size and time, so a new release of
    the weights is converted anew. None when the model needs no conversion."""
    from memory.home import cache_dir

    layout = LOCAL_MODELS[name].fast_layout
    if layout is None:
        return None
    source = gguf_path(name)
    stat = source.stat()
    return cache_dir() / "models" / f"{source.stem}.{layout}-{stat.st_size}-{stat.st_mtime_ns}.gguf"


def weights_path(name: str) -> Path:
    """The GGUF file to load for the embedded model ``name``: the converted copy
    (made now if missing), else the shipped file (asked for, or the conversion failed:
    logged, the model still runs, only slower)."""
    source = gguf_path(name)
    if weights_choice() == "shipped":
        return source
    target = converted_path(name)
    if target is None:
        return source
    if target.is_file():
        return target
    try:
        convert(source, target, LOCAL_MODELS[name].fast_layout or "")
    except LocalModelError as exc:
        log.warning("%s; loading the shipped weights as they are (slower prompts)", exc)
        return source
    for old in target.parent.glob(f"{source.stem}.*.gguf"):
        if old != target:  # copies of earlier releases of the weights
            old.unlink(missing_ok=True)
    return target


def forget(path: Path, name: str) -> bool:
    """Remove ``path`` if it is a converted copy of ``name`` (it would not load); True
    when it was one, so the caller may load the shipped file instead."""
    target = converted_path(name)
    if target is None or path != target:
        return False
    path.unlink(missing_ok=True)
    return True


def convert(source: Path, target: Path, layout: str) -> None:
    """Convert ``source`` to ``layout`` at ``target`` with llama.cpp's quantizer in a
    child process; the file appears whole or not at all. Raises ``LocalModelError``."""
    if layout not in FILE_TYPES:
        raise LocalModelError(f"no conversion of the embedded weights to {layout!r}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalModelError(f"cannot convert the embedded weights into {target.parent}: "
                              f"{exc.strerror or exc}") from None
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memory.llm.local.weights", str(source), str(partial),
             str(FILE_TYPES[layout])],
            capture_output=True, text=True, timeout=CONVERT_SECONDS, check=False)
        if done.returncode != 0 or not partial.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise LocalModelError(f"converting {source.name} to {layout} failed "
                                  f"(exit {done.returncode}: {last[:200]})")
        os.replace(partial, target)
    except subprocess.TimeoutExpired:
        raise LocalModelError(f"converting {source.name} to {layout} took over "
                              f"{CONVERT_SECONDS} s") from None
    except OSError as exc:
        raise LocalModelError(f"converting {source.name} to {layout} failed: "
                              f"{exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)


def log_probs(path: Path, tokens: list[int], threads: int = 1) -> Any:
    """The model at ``path``'s next-token log-probabilities at each of ``tokens``
    (a numpy array, tokens x vocabulary): how a converted copy is compared with the
    shipped file (``scripts/bench_weights.py``, the tests)."""
    import numpy as np
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), n_ctx=max(512, len(tokens)), n_threads=threads,
                  n_batch=128, logits_all=True, verbose=False)
    try:
        llama.eval(tokens)
        scores = np.array(llama.scores[:len(tokens)], dtype=np.float64)
    finally:
        llama.close()
    scores -= scores.max(axis=1, keepdims=True)
    return scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))


def _main(argv: list[str]) -> int:
    """The child process: ``python -m memory.llm.local.weights SOURCE TARGET FTYPE``."""
    source, target, file_type = argv
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = int(file_type)
    params.allow_requantize = True  # the source is quantized already (Q4_1)
    params.nthread = 1
    code = llama_cpp.llama_model_quantize(source.encode(), target.encode(), params)
    if code != 0:
        print(f"llama_model_quantize returned {code}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
