"""``engram replay SOURCE --backends a,b,...``: re-drive a source, score, report.

Reached from the ``engram`` command through the entry-point group
``engram.commands`` (the TUI package never imports replay).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from memory.redact import install_log_redaction, redact
from replay.cli.args import EXIT_USAGE, checked, model_arguments
from replay.cli.build import build


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram replay",
        epilog="Also: engram replay demo [qa|experience] [options] (the bundled benchmark); "
               "engram replay build REPO [--benchmark NAME] --out DIR (a benchmark's "
               "sources; outlines from --targets by default); "
               "engram replay score ANSWERS --tasks FILE (grade answers, no model); "
               "engram replay report RUN_DIR [RUN_DIR...] (merge runs: tables, charts, HTML).",
        description="Re-drive a recorded transcript, a LoCoEval-style outline (or a folder "
                    "of them), an iterative task file (CodeIF-Bench JSONL), a question file "
                    "(LongCodeQA) or a task-chain file (SWE-ContextBench) against memory "
                    "backends, and score them.")
    parser.add_argument("source", type=Path)
    parser.add_argument("--backends", default="full,empty,rag",
                        help="comma-separated backend names (oracle: outlines only)")
    parser.add_argument("--model", default=None,
                        help="answer model (any litellm string or a config alias)")
    model_arguments(parser)
    parser.add_argument("--judge-model", default=None,
                        help="the LLM judge's model (benchmarks that judge answers with one)")
    parser.add_argument("--repo", type=Path, default=None,
                        help="the repository outlines refer to (default: the outline's repo)")
    parser.add_argument("--out", default=None,
                        help="run folder: a path or an fsspec URL (s3://bucket/run, ...)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=1,
                        help="pairs in flight at once (Ray tasks with --executor ray)")
    parser.add_argument("--executor", choices=["local", "ray"], default="local",
                        help="local: pairs run in this process (the reference); ray: each "
                             "pair a Ray task (pip install 'engram[ray]')")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="the Ray cluster to use (default: start a local instance)")
    parser.add_argument("--ray-cpus-per-task", type=float, default=1.0, metavar="C",
                        help="Ray's CPU request per pair task; below 1 packs several "
                             "LLM-bound pairs on a CPU (default 1)")
    parser.add_argument("--store-uri", default=None, metavar="URI",
                        help="where the pairs' memory stores (LanceDB) go: a path or an "
                             "object-store URI every worker can reach, one folder per pair "
                             "and run (default: each worker's temp folder)")
    parser.add_argument("--budget-usd", type=float, default=None, metavar="X",
                        help="stop launching pairs once the projected cost would pass X "
                             "dollars (litellm's prices; pairs on record count)")
    parser.add_argument("--rpm", action="append", default=[], metavar="[MODEL=]N",
                        help="at most N calls per minute per model (MODEL=N: that model), "
                             "held across all workers; repeatable")
    parser.add_argument("--resume", action="store_true",
                        help="skip (source, backend) pairs the run folder has finished")
    parser.add_argument("--limit", type=int, default=None, help="first N conversations only")
    parser.add_argument("--max-tokens", type=int, default=512, help="cap on each answer")
    parser.add_argument("--window", type=_window, default=None, metavar="TOKENS",
                        help="the model window every budget is cut from: full drops its "
                             "oldest turns past it, every backend packs within it (e.g. "
                             "32768); 0: unbounded; default: the model's own")
    parser.add_argument("--test-timeout", type=float, default=None,
                        help="seconds per sandboxed test run (default: 60 for outline "
                             "tests, 10 for an iterative turn's tests)")
    parser.add_argument("--backend-opt", action="append", default=[], metavar="KEY=VALUE",
                        help="a backend hyperparameter, repeatable (e.g. compact_turns=6; "
                             "`engram backends` lists them)")
    parser.add_argument("--samples", type=_samples, default=1, metavar="N",
                        help="answers drawn per iterative turn and per generation task, at "
                             "temperature 0.8 when N > 1: pass@k by the unbiased estimator "
                             "(k = 1 and N; default 1: one answer at temperature 0)")
    for bench in _benchmarks():  # each benchmark's own options, in a group of its own
        bench.add_arguments(parser)
    return parser


def _benchmarks() -> list[Any]:
    """The registered benchmarks that load (one that does not is left out here: running
    a source it owns says why)."""
    from replay.benchmark import BenchmarkError, benchmarks

    found = []
    for name in benchmarks.names():
        try:
            found.append(benchmarks.get(name))
        except BenchmarkError:
            continue
    return found


_window = checked(int, "a whole number", lambda v: v >= 0,
                  "0 (unbounded) or a number of tokens")
_samples = checked(int, "a whole number", lambda v: v >= 1, ">= 1")


def _config(args: argparse.Namespace) -> Any:
    from memory.backends import registry
    from memory.backends.options import parse_options
    from memory.llm.client import default_model
    from replay.core.ratelimit import parse_rpm
    from replay.core.runner import ReplayConfig
    from replay.sandbox.sandbox import Limits

    options = {bench.name: found for bench in _benchmarks() if (found := bench.options(args))}
    out = args.out or Path("replay-runs") / f"{args.source.stem}"
    return ReplayConfig(
        backends=[b.strip() for b in args.backends.split(",") if b.strip()],
        model=args.model or default_model(), out=out, repo=args.repo, seed=args.seed,
        concurrency=args.concurrency, resume=args.resume, limit=args.limit,
        max_tokens=args.max_tokens, judge_model=args.judge_model,
        limits=Limits(timeout=args.test_timeout or 60.0),
        backend_options=parse_options(args.backend_opt, registry.names()),
        benchmark_options=options,
        executor=args.executor, ray_address=args.ray_address,
        ray_cpus_per_task=args.ray_cpus_per_task, budget_usd=args.budget_usd,
        store_uri=args.store_uri, rate_limits=parse_rpm(args.rpm),
        samples=args.samples, window=args.window,
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from memory.backends.options import BackendOptionError
    from memory.llm.client import LLMError, check_model
    from replay.core.cost import pricing
    from replay.core.errors import SourceError
    from replay.core.executors import ExecutorError
    from replay.core.output import OutputError
    from replay.core.runner import Replay, ReplayError
    from replay.core.sources import load_source
    from replay.reporting.report import summarize, table, write_results

    console = Console(stderr=True)
    try:
        from dataclasses import replace

        from replay.cli.args import use_settings

        chosen = use_settings(args)  # this process's model calls; workers get it in config
        config = replace(_config(args), settings=chosen)
    except (BackendOptionError, ValueError) as exc:
        console.print(f"engram replay: {exc}", markup=False)
        return EXIT_USAGE
    try:
        for model in dict.fromkeys(_models(config)):
            check_model(model)
        sources = load_source(args.source)
        for bench in _benchmarks():
            bench.check(config, sources)  # fail before the run
    except (SourceError, LLMError, ValueError) as exc:
        console.print(f"engram replay: {redact(str(exc))}", markup=False)
        return EXIT_USAGE
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=console, transient=False) as bars:
        tasks: dict[str, Any] = {}

        def progress(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bars.add_task(label, total=total)
            bars.update(tasks[label], completed=done, total=total)

        try:
            replay = Replay(config, progress=progress)
        except (ReplayError, OutputError) as exc:
            console.print(f"engram replay: {redact(str(exc))}", markup=False)
            return EXIT_USAGE
        try:
            pairs = asyncio.run(replay.run(sources))
        except (ReplayError, ExecutorError) as exc:  # found before any pair runs
            console.print(f"engram replay: {redact(str(exc))}", markup=False)
            return EXIT_USAGE
        finally:
            replay.close()
    settings = {k: str(v) for k, v in vars(args).items()}
    for bench in _benchmarks():
        settings.update(bench.settings(config))
    extra: dict[str, Any] = {"pricing": {m: pricing(m) for m in dict.fromkeys(_models(config))}}
    if replay.budget is not None and replay.budget.report() is not None:
        extra["budget"] = replay.budget.report()
    path = write_results(replay.output, pairs, settings, **extra)
    summary = {**summarize(pairs), **extra}
    Console().print(table(summary))
    from replay.reporting.chart import chart_png

    chart = None
    try:
        png = chart_png(summary)
        if png is not None:
            chart = replay.output.write_bytes(png, "chart.png")
    except Exception as exc:  # a chart is a nicety: the results are written already
        console.print(f"no chart: {type(exc).__name__}: {exc}")
    errors = [p for p in pairs if p.get("error")]
    for row in errors:
        console.print(f"{row['source']} · {row['backend']}: {redact(str(row['error']))}",
                      style="red", markup=False)
    for bench in _benchmarks():
        for line in bench.notes(config, pairs):
            console.print(line, markup=False)
    console.print(f"results: {path}  conversations: {replay.output.url('conversations')}"
                  + (f"  chart: {chart}" if chart else ""))
    return 1 if errors else 0


def _models(config: Any) -> list[str]:
    """Every model the run calls: the answer model, the judge, the benchmarks' own."""
    found = [config.model, config.judge_model]
    for bench in _benchmarks():
        found += bench.models(config)
    return [m for m in found if m]


def main(argv: list[str] | None = None) -> int:
    from memory.settings import scope

    install_log_redaction()
    with scope():  # the settings a command installs end with it
        return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        return build(argv[1:])
    if argv[:1] == ["report"]:  # runs merged: results.json, tables, charts, an HTML page
        from replay.reporting.merge import main as report

        return report(argv[1:])
    if argv[:1] and not argv[0].startswith("-"):  # a benchmark's own subcommand
        for bench in _benchmarks():  # (score: codeif's grading; demo: the bundled benchmark)
            command = bench.commands().get(argv[0])
            if command is not None:
                return command(argv[1:])
    args = build_parser().parse_args(argv)
    return run(args)
