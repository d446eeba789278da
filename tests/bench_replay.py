"""Benchmark replay (not collected by pytest; run it by hand).

    .venv/bin/python -m tests.bench_replay [--outlines 16] [--backends a,b] [--long-turns 70]
        [--dir OUTLINES --repo REPO [--min-l 50]]   (outlines of another repository)
        [--window TOKENS] [--revision-cues RATE] [--voice template|varied|FILE] [--seed N]
        [--save FILE.json]

1. The bundled demo benchmark with the template mock user and the context-reading
   scripted model (tests/replay/reader.py: it can say only what its prompt holds; it
   answers each turn as an assistant does, with the code it was shown and an explanation,
   tests/replay/answers.py), in a window of ``--window`` tokens (default 0: unbounded;
   32768: one ``full`` outgrows), prompt tokens counted as the budgets count them (not
   words), all registered backends + oracle: per backend and per subset, recall of true
   items and
   stale share in the task-time ContextPack (↑ / ↓), compression = full's prompt tokens /
   the backend's (↑, "5.7×"), pass@1 and normalized pass@1 in % (↑), memory LLM calls
   per conversation turn (task queries' calls included), and the judge's accuracy on the
   demo's truth/distractor pairs; beside them, the ctx stale floors of the outlines
   (``replay.locoeval.floor``: a memory right on all else that keeps every stale
   dependency, or only those the function's module has at hand).
2. Wall time of one long template replay across the same backends (0 turns: skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.backends import registry
from memory.backends.options import parse_options
from memory.index.embed import get_embedder
from memory.llm.client import LLM, LLMConfig
from replay.core.runner import Replay, ReplayConfig
from replay.locoeval import DEMO
from replay.locoeval.floor import at_hand, stale_floor
from replay.locoeval.outline import Outline, load_outlines, parse_outline, validate_rules
from replay.locoeval.report import volume
from replay.locoeval.voice import check_voice, voiced
from replay.reporting.report import summarize
from tests.conftest import SCRIPT, _register_scripted
from tests.replay.answers import ANSWER_WORDS
from tests.replay.reader import ContextReader

COLUMNS = (("recall ↑", "recall"), ("stale ↓", "stale"), ("compr. ↑", "compression"),
           ("pass@1 ↑", "pass@1"), ("norm.pass@1 ↑", "normalized_pass@1"),
           ("extract F1 ↑", "extract_f1"), ("prompt tok ↓", "prompt_tokens"),
           ("mem calls/turn", "memory_calls"), ("errors", "errors"))


def run(backends: list[str], outlines: list[Outline], out: Path,
        options: dict[str, object] | None = None,
        repo: Path = DEMO / "inventory", window: int = 0,
        cues: float = 0.0, voice: str = "template",
        seed: int = 0) -> tuple[list[dict], float]:
    config = ReplayConfig(backends=backends, model="scripted/bench", out=out,
                          repo=repo, max_tokens=128, window=window, seed=seed,
                          benchmark_options={"locoeval": {"revision_cues": cues,
                                                          "voice": voice}},
                          backend_options=dict(options or {}))
    replay = Replay(config, embedder=get_embedder())
    start = time.perf_counter()
    try:
        pairs = asyncio.run(replay.run(outlines))
    finally:
        replay.close()
    return pairs, time.perf_counter() - start


def padded(base: Outline, turns: int) -> Outline:
    """``base`` padded with copies of its noise topics to ``turns`` queries."""
    assert base.source is not None
    data = json.loads(base.source.read_text())
    data["id"] = f"{base.id}-long-{turns}"
    count = sum(len(t["queries"]) for t in data["topics"])
    noise = [t for t in data["topics"] if t["kind"] == "noise"]
    n = 0
    while count < turns and noise:
        extra = copy.deepcopy(noise[n % len(noise)])
        extra["id"] = f"pad{n}"
        extra["queries"] = extra["queries"][: turns - count]
        for j, q in enumerate(extra["queries"]):
            q["id"] = f"pad{n}-q{j}"
        data["topics"].insert(len(data["topics"]) // 2, extra)
        count += len(extra["queries"])
        n += 1
    outline = parse_outline(data, base.source)
    problems = validate_rules(outline)
    assert not problems, problems
    return outline


def fmt(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key == "compression":
        return f"{value:.1f}×"
    if key.startswith("normalized_"):
        return f"{value:.0f}%"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_rows(title: str, rows: dict[str, dict[str, Any]], names: list[str]) -> None:
    print(title)
    print(f"{'backend':10}" + "".join(f"{h:>15}" for h, _ in COLUMNS))
    for name in names:
        row = rows.get(name, {})
        print(f"{name:10}" + "".join(f"{fmt(k, row.get(k)):>15}" for _, k in COLUMNS))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--outlines", type=int, default=None, help="first N (default: all)")
    parser.add_argument("--backends", default=None, help="default: all registered + oracle")
    parser.add_argument("--long-turns", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=DEMO / "outlines",
                        help="outlines built by `engram replay build` (default: the demo's)")
    parser.add_argument("--repo", type=Path, default=DEMO / "inventory",
                        help="the repository they were built from")
    parser.add_argument("--min-l", type=int, default=0,
                        help="only outlines with at least this many queries (LoCoEval's l)")
    parser.add_argument("--backend-opt", action="append", default=[], metavar="KEY=VALUE",
                        help="backend hyperparameters, as engram replay's")
    parser.add_argument("--window", type=int, default=0,
                        help="the model window in tokens (default 0: unbounded)")
    parser.add_argument("--revision-cues", type=float, default=0.0,
                        help="share of replacing items voiced with a cue (default 0)")
    parser.add_argument("--voice", default="template",
                        help="template | varied | a phrasing file (replay.locoeval.voice)")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (varied voice)")
    parser.add_argument("--answer-words", type=int, default=ANSWER_WORDS,
                        help="cap of the scripted model's conversation answers (0: 'Noted.')")
    parser.add_argument("--ids", default=None,
                        help="only these outlines (comma-separated ids)")
    parser.add_argument("--save", type=Path, default=None,
                        help="write the summary (per backend, by subset) and the pairs to "
                             "this JSON file (runs saved apart: "
                             "replay.reporting.report.summarize of "
                             "their pairs together)")
    args = parser.parse_args()
    options = parse_options(args.backend_opt, registry.names())
    names = (args.backends.split(",") if args.backends else [*registry.names(), "oracle"])
    wanted = set(args.ids.split(",")) if args.ids else None
    every = load_outlines(args.dir)
    outlines = [o for o in every if len(o.queries()) >= args.min_l
                and (wanted is None or o.id in wanted)][: args.outlines]
    # a phrasing file covers the folder's outlines, not only those --min-l / --ids keep
    voice = check_voice(args.voice, every, args.seed)
    reader = ContextReader([voiced(o, voice) for o in outlines], args.repo, args.answer_words)
    _register_scripted()
    counter = LLM(LLMConfig(model="scripted/bench"))  # tokens as the budgets count them
    SCRIPT.default, SCRIPT.count_prompt, SCRIPT.piece_words = reader, counter.count_messages, 64
    with tempfile.TemporaryDirectory() as tmp:
        pairs, wall = run(names, outlines, Path(tmp) / "demo", options, args.repo,
                          args.window, args.revision_cues, args.voice, args.seed)
        summary = summarize(pairs)
        for name, row in summary["backends"].items():  # memory LLM calls per committed turn
            mine = [p for p in pairs if p["backend"] == name]
            turns = sum(int(p.get("turns") or 0) for p in mine)
            calls = sum(int((p.get("usage") or {}).get("memory", {}).get("calls") or 0)
                        for p in mine)
            row["memory_calls"] = round(calls / turns, 2) if turns else None
        print(f"{args.dir.name}: {len(outlines)} outlines x {len(names)} backends, {wall:.1f} s "
              "(template user, context-reading scripted model, answers up to "
              f"{args.answer_words} words; revision cues {args.revision_cues}; "
              f"voice {voice.record()})"
              + (f"; options {options}" if options else ""))
        print(volume(summary) or "full did not run: no conversation volume to report")
        samples = [s for o in outlines for s in o.samples]
        floor = {"dependencies": stale_floor(samples),
                 "at_hand": stale_floor(samples, at_hand(args.repo))}
        print(f"ctx stale of a memory right on all else that keeps every stale dependency: "
              f"{fmt('a', floor['dependencies'])}; only those the module has at hand: "
              f"{fmt('a', floor['at_hand'])} (replay.locoeval.floor)")
        print_rows("all outlines", summary["backends"], names)
        for subset, rows in summary["by_subset"].items():
            print_rows(f"\n{subset}", rows, names)
        check = summary["judge_check"] or {}
        print(f"\njudge accuracy on the demo's truth/distractor pairs: "
              f"{fmt('a', check.get('accuracy'))} "
              f"({check.get('correct')}/{check.get('checks')} checks)")
        for row in pairs:
            if row.get("error"):
                print(f"error {row['source']} · {row['backend']}: {row['error']}")
        if args.save is not None:
            keep = {k: summary[k] for k in ("backends", "by_subset", "windows", "judge_check")}
            args.save.write_text(json.dumps({
                "outlines": [o.id for o in outlines], "window": args.window,
                "revision_cues": args.revision_cues, "voice": voice.record(),
                "answer_words": args.answer_words, "stale_floor": floor,
                "seconds": round(wall, 1), **keep, "pairs": pairs}, indent=1, default=str))
        if args.long_turns:
            long = padded(outlines[0], args.long_turns)
            turns = len(long.queries())
            _, wall = run(names, [long], Path(tmp) / "long", options, args.repo,
                          args.window, args.revision_cues, args.voice, args.seed)
            print(f"{turns}-turn template replay across {len(names)} backends: {wall:.1f} s")


if __name__ == "__main__":
    main()
