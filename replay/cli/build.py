"""``engram replay build REPO --out DIR``: a benchmark's sources built from a repository,
through the benchmark's own ``build`` hook (``replay.benchmark.BuildRequest``).

Which benchmark: ``--benchmark NAME`` (any registered one that can build), or the
shorthands ``--qa`` (LongCodeQA question files) and ``--experience`` (SWE-ContextBench
task chains); by default LoCoEval-style outlines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memory.redact import redact
from replay.cli.args import EXIT_USAGE, model_arguments

DEFAULT = "locoeval"
SHORTHANDS = {"qa": "longcodeqa", "experience": "swecontext"}  # --qa, --experience


def build_command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram replay build",
        description="Build a benchmark's sources from a repository: LoCoEval-style outlines "
                    "from target functions that have tests (the default), question files "
                    "(--qa), task chains (--experience), or any registered benchmark that "
                    "can build (--benchmark NAME).")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--benchmark", default=None, metavar="NAME",
                        help=f"the benchmark whose sources to build (default: {DEFAULT})")
    parser.add_argument("--targets", type=Path, default=None,
                        help='JSON: [{"location": "path::Qual.name", "tests": ["node id"]}] '
                             "(outlines and --experience chains)")
    parser.add_argument("--qa", action="store_true",
                        help="write LongCodeQA-style questions from the repository's own facts "
                             "(raises, defines, parameter defaults); with --model, drop those "
                             "the model answers without context (--benchmark longcodeqa)")
    parser.add_argument("--experience", action="store_true",
                        help="write SWE-ContextBench-style task chains from --targets "
                             "(--benchmark swecontext)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the sources")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=None,
                        help="sources to build (outlines: default 8, k = 1..4 in turn; with "
                             "--grid 16; questions: default 20)")
    parser.add_argument("--grid", action="store_true",
                        help="the paper's even grid: 4 intervals of l in [30, 70) x k = 1..4, "
                             "both subsets for every k")
    parser.add_argument("--model", default=None,
                        help="with this model: describe each target's core functionality, "
                             "rewrite distractors, and try generation in sample selection "
                             "(default: docstrings, templates, reader-free selection only)")
    model_arguments(parser)
    return parser


def chosen(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The benchmark's name: --benchmark, or a shorthand, else the default."""
    named = [SHORTHANDS[flag] for flag in SHORTHANDS if getattr(args, flag)]
    if args.benchmark is not None:
        named.append(args.benchmark)
    if len(set(named)) > 1:
        parser.error(f"choose one benchmark to build, not {' and '.join(named)}")
    return named[0] if named else DEFAULT


def _can_build(name: str) -> bool:
    from replay.benchmark import BenchmarkError, benchmarks, builder

    try:
        return builder(benchmarks.get(name)) is not None
    except BenchmarkError:  # a third party's that does not load: not one to offer
        return False


def build(argv: list[str]) -> int:
    from replay.benchmark import BenchmarkError, BuildRequest, benchmarks, builder

    parser = build_command_parser()
    args = parser.parse_args(argv)
    name = chosen(args, parser)
    try:
        from memory.llm.client import LLMError, check_model
        from replay.cli.args import use_settings

        use_settings(args)
        if args.model:
            check_model(args.model)
        hook = builder(benchmarks.get(name))
    except (LLMError, ValueError, BenchmarkError) as exc:
        print(f"engram replay build: {redact(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    if hook is None:
        able = [n for n in benchmarks.names() if _can_build(n)]
        print(f"engram replay build: the {name} benchmark cannot build its sources from a "
              f"repository (it has no build hook); these can: {', '.join(able)}",
              file=sys.stderr)
        return EXIT_USAGE
    request = BuildRequest(repo=args.repo, out=args.out, seed=args.seed, count=args.count,
                           targets=args.targets, grid=args.grid, model=args.model)
    try:
        lines = hook(request)
    except (LLMError, OSError, ValueError) as exc:
        print(f"engram replay build: {redact(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(lines))
    return 0
