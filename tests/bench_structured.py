"""Benchmark structured output on the embedded model (not collected by pytest).

    .venv/bin/python -m tests.bench_structured [--turns 20] [--outline inventory-05-k1-sh]
        [--backends mem0,mem0r] [--modes grammar,prompt] [--answer-tokens 96]

One demo outline, cut to its first N queries, replayed with the template mock user
on ``local/smollm2`` for each memory backend, twice: with the JSON-Schema grammar
(the default path) and without it (``prompt``: the schema in the prompt, lenient
parse, one corrective retry: what a model without constrained decoding gets).
Printed per backend and mode: memory calls per turn, share of structured calls that
parsed, memories stored, seconds per memory call (median, mean), and the reader-free
recall / stale share of true items in the task-time ContextPack.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.index.embed import get_embedder
from memory.llm.client import LLM
from replay.core.runner import Replay, ReplayConfig
from replay.locoeval import DEMO
from replay.locoeval.outline import Outline, load_outlines, parse_outline


def truncated(base: Outline, turns: int) -> Outline:
    """``base`` with only its first ``turns`` queries (topics cut in order)."""
    assert base.source is not None
    data = json.loads(base.source.read_text())
    data["id"] = f"{base.id}-first-{turns}"
    left, topics = turns, []
    for topic in data["topics"]:
        if left <= 0:
            break
        topic["queries"] = topic["queries"][:left]
        left -= len(topic["queries"])
        topics.append(topic)
    data["topics"] = topics
    return parse_outline(data, base.source)


class Meter:
    """Times every structured call and keeps the stats objects it saw."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.stats: dict[int, Any] = {}
        self._original = LLM.complete_json

    def install(self, mode: str) -> None:
        meter, original = self, self._original

        async def timed(llm: LLM, *args: Any, **kwargs: Any) -> Any:
            if llm.model.startswith("local/"):
                llm.config = type(llm.config)(**{**llm.config.__dict__, "structured": mode})
            meter.stats[id(llm.stats)] = llm.stats
            start = time.perf_counter()
            try:
                return await original(llm, *args, **kwargs)
            finally:
                meter.seconds.append(time.perf_counter() - start)

        LLM.complete_json = timed  # type: ignore[method-assign]

    def uninstall(self) -> None:
        LLM.complete_json = self._original  # type: ignore[method-assign]

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for stats in self.stats.values():
            for key, value in stats.as_dict().items():
                out[key] = out.get(key, 0) + value
        return out


def memories_stored(out: Path, backend: str) -> int:
    """Live memories at the end, from the run's transcript records (ADD - DELETE)."""
    live = 0
    for path in (out / "conversations").glob(f"*__{backend}.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "memory" and record.get("backend") == backend:
                live += {"ADD": 1, "DELETE": -1}.get(record.get("op"), 0)
    return live


def run_one(backend: str, mode: str, outline: Outline, answer_tokens: int,
            tmp: Path) -> dict[str, Any]:
    meter = Meter()
    meter.install(mode)
    out = tmp / f"{backend}-{mode}"
    config = ReplayConfig(backends=[backend], model="local/smollm2", out=out,
                          repo=DEMO / "inventory", max_tokens=answer_tokens)
    replay = Replay(config, embedder=get_embedder())
    start = time.perf_counter()
    try:
        [pair] = asyncio.run(replay.run([outline]))
    finally:
        replay.close()
        meter.uninstall()
    wall = time.perf_counter() - start
    turns = len(outline.queries())
    totals = meter.totals()
    seconds = meter.seconds or [0.0]
    return {
        "backend": backend, "mode": mode, "turns": turns, "wall_s": round(wall, 1),
        "calls_per_turn": round(totals.get("calls", 0) / turns, 2),
        "parsed_share": round(totals.get("parsed", 0) / max(1, totals.get("calls", 0)), 3),
        "retries": totals.get("retries", 0), "lenient": totals.get("lenient", 0),
        "failed": totals.get("failed", 0), "memories": memories_stored(out, backend),
        "s_per_call_median": round(statistics.median(seconds), 2),
        "s_per_call_mean": round(statistics.fmean(seconds), 2),
        "recall": _mean((pair.get("scores") or {}).get("recall")),
        "stale": _mean((pair.get("scores") or {}).get("stale")),
        "error": pair.get("error"),
    }


def _mean(values: Any) -> float | None:
    if not values:
        return None
    numbers = [float(v) for v in (values.values() if isinstance(values, dict) else values)]
    return round(statistics.fmean(numbers), 3) if numbers else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--outline", default="inventory-05-k1-sh")
    parser.add_argument("--backends", default="mem0,mem0r")
    parser.add_argument("--modes", default="grammar,prompt")
    parser.add_argument("--answer-tokens", type=int, default=96)
    args = parser.parse_args()
    [base] = [o for o in load_outlines(DEMO / "outlines") if o.id == args.outline]
    outline = truncated(base, args.turns)
    keys = ("backend", "mode", "turns", "calls_per_turn", "parsed_share", "retries",
            "failed", "memories", "s_per_call_median", "s_per_call_mean", "recall", "stale",
            "wall_s")
    print(" ".join(f"{k:>17}" for k in keys))
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):
            for mode in args.modes.split(","):
                row = run_one(backend, mode, outline, args.answer_tokens, Path(tmp))
                print(" ".join(f"{row[k]!s:>17}" for k in keys), flush=True)
                if row["error"]:
                    print(f"  error: {row['error']}")


if __name__ == "__main__":
    main()
