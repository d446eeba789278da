"""Benchmark replay (not collected by pytest; run it by hand).

    .venv/bin/python -m tests.bench_replay [--outlines 8] [--long-turns 70]

1. The bundled demo benchmark with the template mock user and the scripted model: per
   backend, recall of ground-truth items and stale share in the ContextPack of each
   generation task, context tokens at task time, compression vs full, pass@1.
2. Wall time of one 70-turn template replay across all registered backends (+ oracle).

The scripted model answers generation tasks with the original function, memory prompts
with a literal extractor (every sentence of the developer's message is a fact, every fact
is ADDed; CodeMem's judge says KEEP), and anything else with "Noted.".
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.backends import registry
from memory.embed import get_embedder
from replay.cli import DEMO
from replay.judge import THRESHOLD
from replay.outline import load_outlines, parse_outline, validate_rules
from replay.report import summarize
from replay.runner import Replay, ReplayConfig
from tests.conftest import SCRIPT, _register_scripted
from tests.replay.test_demo import demo_reply

SENTENCE = re.compile(r"(?<=[.!?])\s+")


def bench_reply(messages: list[dict[str, Any]]) -> str:
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    last = messages[-1]["content"]
    if system.startswith("You keep the long-term memory"):
        user = last.split("\n\nAssistant:", 1)[0].removeprefix("Developer: ")
        facts = [s.strip() for s in SENTENCE.split(user) if len(s.strip()) > 12]
        return json.dumps({"facts": facts[:8]})
    if system.startswith("You keep a coding assistant's memory consistent"):
        count = len(re.findall(r"^\s*F?\d+[.:)]", last.split("New facts", 1)[-1], re.M))
        return json.dumps({"operations": [{"fact": i, "op": "ADD"} for i in range(count)]})
    if system.startswith("You manage the code context"):
        return '{"decision": "KEEP"}'
    if system.startswith(("You help a coding assistant", "You keep the change log")):
        return "One sentence about the change."
    return demo_reply(messages)


def config(backends: list[str], out: Path) -> ReplayConfig:
    return ReplayConfig(backends=backends, model="scripted/bench", out=out,
                        max_tokens=128, judge_threshold=THRESHOLD)


def run(backends: list[str], outlines: list[Any], out: Path) -> tuple[list[dict], float]:
    replay = Replay(config(backends, out), embedder=get_embedder())
    start = time.perf_counter()
    try:
        pairs = asyncio.run(replay.run(outlines))
    finally:
        replay.close()
    return pairs, time.perf_counter() - start


def padded(turns: int) -> Any:
    """The demo's first k=3 outline padded with noise topics to ``turns`` queries."""
    path = DEMO / "outlines" / "inventory-03-k3.json"
    data = json.loads(path.read_text())
    data["id"] = f"inventory-long-{turns}"
    data["repo"] = str((DEMO / "inventory").resolve())
    count = sum(len(t["queries"]) for t in data["topics"])
    noise = [t for t in data["topics"] if t["kind"] == "noise"]
    n = 0
    while count < turns:
        extra = copy.deepcopy(noise[n % len(noise)])
        extra["id"] = f"pad{n}"
        extra["queries"] = extra["queries"][: turns - count]
        for j, q in enumerate(extra["queries"]):
            q["id"] = f"pad{n}-q{j}"
        data["topics"].insert(len(data["topics"]) // 2, extra)
        count += len(extra["queries"])
        n += 1
    outline = parse_outline(data, path)
    problems = validate_rules(outline)
    assert not problems, problems
    return outline


def fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--outlines", type=int, default=8)
    parser.add_argument("--long-turns", type=int, default=70)
    args = parser.parse_args()
    _register_scripted()
    SCRIPT.default = bench_reply
    SCRIPT.count_prompt = True
    names = [*registry.names(), "oracle"]
    outlines = load_outlines(DEMO / "outlines")[: args.outlines]
    with tempfile.TemporaryDirectory() as tmp:
        pairs, wall = run(names, outlines, Path(tmp) / "demo")
        summary = summarize(pairs)
        print(f"demo benchmark: {len(outlines)} outlines x {len(names)} backends, "
              f"{wall:.1f} s")
        cols = ["recall", "stale", "context_tokens", "compression", "pass@1", "errors"]
        print(f"{'backend':10}" + "".join(f"{c:>16}" for c in cols))
        for name in names:
            row = summary["backends"].get(name, {})
            print(f"{name:10}" + "".join(f"{fmt(row.get(c)):>16}" for c in cols))
        long = padded(args.long_turns)
        turns = sum(len(t.queries) for t in long.topics)
        _, wall = run(names, [long], Path(tmp) / "long")
        print(f"{turns}-turn template replay across {len(names)} backends: {wall:.1f} s")


if __name__ == "__main__":
    main()
