"""The embedded model's shipped weights against the converted copy engram loads
(``memory.llm.local.weights``): prompt and generation speed on one thread, and how close
their next-token distributions are.

    .venv/bin/python scripts/bench_weights.py [--threads 1] [--prompt 1500] [--runs 3]

Speed: a prompt of ``--prompt`` tokens (this repository's own code) evaluated from an
empty cache, best of ``--runs``; then 128 tokens generated greedily. Closeness: over
600 tokens of README.md, the mean KL divergence (shipped || converted) of the next-token
distributions, the share of positions whose most likely token is the same, and each
model's mean negative log-likelihood of the text.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def speed(path: Path, threads: int, prompt_tokens: int, runs: int) -> tuple[float, float]:
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), n_ctx=4096, n_threads=threads,
                  n_threads_batch=threads, seed=0, n_batch=128, flash_attn=True,
                  verbose=False)
    try:
        text = (ROOT / "memory" / "backends" / "cards" / "revise.py").read_text()
        tokens = llama.tokenize(text.encode())[:prompt_tokens]
        best = float("inf")
        for _ in range(runs):
            llama.reset()
            start = time.perf_counter()
            llama.eval(tokens)
            best = min(best, time.perf_counter() - start)
        llama.reset()
        ask = llama.tokenize(b"<|im_start|>user\nWrite a Python function that merges two "
                             b"sorted lists.<|im_end|>\n<|im_start|>assistant\n", special=True)
        start, made = time.perf_counter(), 0
        for _ in llama.generate(ask, temp=0.0):
            made += 1
            if made >= 128:
                break
        return len(tokens) / best, made / (time.perf_counter() - start)
    finally:
        llama.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from llama_cpp import Llama

    from memory.llm.local import gguf_path, weights_path
    from memory.llm.local.weights import log_probs

    shipped, converted = gguf_path("smollm2"), weights_path("smollm2")
    if converted == shipped:
        print("no converted copy (ENGRAM_LOCAL_WEIGHTS=shipped, or the conversion failed)")
        return 1
    for label, path in (("shipped", shipped), ("converted", converted)):
        prompt, generate = speed(path, args.threads, args.prompt, args.runs)
        print(f"{label:9} {path.name}: {path.stat().st_size / 1e6:.0f} MB, prompt "
              f"{prompt:.0f} tokens/s, generation {generate:.0f} tokens/s "
              f"({args.threads} thread(s))")
    vocab = Llama(model_path=str(shipped), vocab_only=True, verbose=False)
    tokens = vocab.tokenize((ROOT / "README.md").read_text().encode())[:600]
    threads = os.cpu_count() or 1
    ref, other = log_probs(shipped, tokens, threads), log_probs(converted, tokens, threads)
    kl = float(np.mean((np.exp(ref) * (ref - other)).sum(axis=1)))
    agree = float(np.mean(ref.argmax(axis=1) == other.argmax(axis=1)))
    nll = [-float(np.mean([lp[i, tokens[i + 1]] for i in range(len(tokens) - 1)]))
           for lp in (ref, other)]
    print(f"over {len(tokens)} tokens of README.md: KL {kl:.4f} nats/token, most likely "
          f"token the same at {agree:.1%} of positions, NLL {nll[0]:.3f} (shipped) vs "
          f"{nll[1]:.3f} (converted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
