"""``engram replay build REPO``: outlines, question files (``--qa``) or task chains
(``--experience``) built from a repository."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memory.redact import redact
from replay.cli.args import EXIT_USAGE, model_arguments


def build_command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram replay build",
        description="Build LoCoEval-style outlines from target functions that have tests.")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--targets", type=Path, default=None,
                        help='JSON: [{"location": "path::Qual.name", "tests": ["node id"]}] '
                             "(outlines and --experience chains)")
    parser.add_argument("--qa", action="store_true",
                        help="write LongCodeQA-style questions from the repository's own facts "
                             "(raises, defines, parameter defaults); with --model, drop those "
                             "the model answers without context")
    parser.add_argument("--experience", action="store_true",
                        help="write SWE-ContextBench-style task chains from --targets")
    parser.add_argument("--out", type=Path, required=True, help="folder for the outlines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=None,
                        help="outlines to build (default 8, k = 1..4 in turn; with --grid 16)")
    parser.add_argument("--grid", action="store_true",
                        help="the paper's even grid: 4 intervals of l in [30, 70) x k = 1..4, "
                             "both subsets for every k")
    parser.add_argument("--model", default=None,
                        help="with this model: describe each target's core functionality, "
                             "rewrite distractors, and try generation in sample selection "
                             "(default: docstrings, templates, reader-free selection only)")
    model_arguments(parser)
    return parser


def build(argv: list[str]) -> int:
    import os

    from replay.locoeval._select import BuildRun, summary
    from replay.locoeval.build import BuildError, load_targets

    parser = build_command_parser()
    args = parser.parse_args(argv)
    try:
        from memory.llm import LLMError, check_model
        from memory.models import use_cli_settings

        use_cli_settings(args.api_base, args.structured)
        if args.model:
            check_model(args.model)
    except (LLMError, ValueError) as exc:
        print(f"engram replay build: {redact(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    if args.qa:
        return build_qa_file(args)
    if args.targets is None:
        parser.error("--targets is required (except with --qa)")
    if args.experience:
        from replay.swecontext.experience_build import main as build_chains

        return build_chains(args)
    try:
        targets = load_targets(args.targets)
        ref = os.path.relpath(args.repo.resolve(), args.out.resolve())
        count = args.count if args.count is not None else (16 if args.grid else 8)
        report = BuildRun(args.repo, targets, args.out, seed=args.seed, count=count,
                          grid=args.grid, model=args.model, repo_ref=ref).run()
    except (BuildError, OSError, ValueError) as exc:
        print(f"engram replay build: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(summary(report)))
    print(f"build report: {args.out / 'build-report.json'}")
    return 0


def build_qa_file(args: argparse.Namespace) -> int:
    """``engram replay build REPO --qa --out DIR``: one question file in DIR."""
    import json
    import os

    from memory.llm import LLMError
    from replay.longcodeqa.qa import as_json
    from replay.longcodeqa.qa_build import build_qa

    if not args.repo.is_dir():
        print(f"engram replay build: {args.repo}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    args.out.mkdir(parents=True, exist_ok=True)
    ref = os.path.relpath(args.repo.resolve(), args.out.resolve())
    try:
        qa, report = build_qa(args.repo, seed=args.seed, count=args.count or 20,
                              model=args.model, repo_ref=ref)
    except (LLMError, OSError, ValueError) as exc:
        print(f"engram replay build: {redact(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    path = args.out / f"{qa.id}.json"
    path.write_text(json.dumps(as_json(qa, report), indent=2) + "\n")
    checked = report["contamination_filter"]
    said = checked if isinstance(checked, str) else \
        f"{len(checked['dropped'])} answered without context by {checked['model']}, dropped"
    print(f"{report['kept']} questions ({report['built']} built; contamination filter: "
          f"{said}): {path}")
    return 0
