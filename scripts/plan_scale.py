"""The projected cost and wall time of a LoCoEval-size replay (docs/replay-at-scale.md).

    .venv/bin/python scripts/plan_scale.py [--results RUN/results.json] [--overhead-s 4.0]
        [--workers 32] [--conversations 128] [--turns 50] [--full-tokens 3e6]

Prompt tokens per conversation: ``--full-tokens`` for ``full`` (the issue's figure from
the LoCoEval paper), the other backends' as full / their compression ratio, taken from
``--results`` (a run's results.json) or the ratios measured on the demo (README). Calls
per conversation: turns x (1 + memory calls per turn) + 5 task queries. Completion
tokens: ``--answer-tokens`` per call. The mock user (LLM) and the judge add one call
per turn of ``--user-tokens`` prompt tokens. Prices: litellm's cost map. Wall time: each
call waits ``latency(prompt) = --call-s + prompt / --prefill-tps`` seconds, plus
``--overhead-s`` of engram's own work per pair (measured by scripts/bench_ray.py), over
``--workers`` pairs in flight, bounded below by the provider's ``--tpm`` (tokens per
minute).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# compression (full's prompt tokens / the backend's) and memory calls per turn measured on
# the demo with the context-reading scripted model (README, "Memory backends")
DEMO = {"full": (1.0, 0.0), "empty": (1.8, 0.0), "rag": (1.5, 0.0), "mem0": (0.9, 2.0),
        "mem0r": (1.4, 2.0), "codemem": (0.7, 1.14), "oracle": (2.8, 0.0)}
MODELS = {"small (7B class)": "deepinfra/Qwen/Qwen2.5-7B-Instruct",
          "medium (32B class)": "cloudflare/@cf/qwen/qwen2.5-coder-32b-instruct",
          "large (72B class)": "deepinfra/Qwen/Qwen2.5-72B-Instruct"}


def ratios(results: Path | None) -> dict[str, tuple[float, float]]:
    if results is None:
        return DEMO
    rows = json.loads(results.read_text())["backends"]
    return {name: (float(row.get("compression") or 1.0), DEMO.get(name, (1.0, 0.0))[1])
            for name, row in rows.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--results", type=Path, default=None)
    p.add_argument("--conversations", type=int, default=128)
    p.add_argument("--turns", type=int, default=50)
    p.add_argument("--full-tokens", type=float, default=3e6)
    p.add_argument("--answer-tokens", type=int, default=400)
    p.add_argument("--user-tokens", type=int, default=3000)
    p.add_argument("--overhead-s", type=float, default=4.0)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument("--call-s", type=float, default=2.0)
    p.add_argument("--prefill-tps", type=float, default=20000.0)
    p.add_argument("--tpm", type=float, default=10e6)
    args = p.parse_args()
    from memory.llm.client import price

    backends = ratios(args.results)
    n = args.conversations
    print(f"{n} conversations x {len(backends)} backends, {args.turns} turns, "
          f"{args.workers} pairs in flight")
    for size, model in MODELS.items():
        dollars = seconds = tokens = 0.0
        for compression, memory_calls in backends.values():
            prompt = args.full_tokens / compression
            calls = args.turns * (1 + memory_calls) + 5
            completion = calls * args.answer_tokens
            user = 2 * args.turns * args.user_tokens  # LLM mock user + LLM judge
            dollars += n * price(model, int(prompt + user),
                                 int(completion + 2 * args.turns * 100))
            tokens += n * (prompt + user)
            seconds += n * (calls * args.call_s + prompt / args.prefill_tps
                            + args.overhead_s)
        wall = max(seconds / args.workers, tokens / args.tpm * 60)
        print(f"{size:20} {model:50} ${dollars:>9,.0f}  {tokens / 1e9:5.2f} B prompt tok  "
              f"{wall / 3600:6.1f} h wall  ({seconds / 3600:,.0f} pair-hours)")


if __name__ == "__main__":
    main()
