"""``engram replay score ANSWERS --tasks TASKS``: grade answers produced elsewhere, no model.

Answers come as CodeIF-Bench publishes them (``function/Experiments/multi_round/<model>/
*.jsonl``: one ``{"task_id", "requirement", "completion"}`` line per answer, a line without
``requirement`` answering the base prompt) or as our own ``{"task_id", "turn", "answer"}``
JSONL (turn 0 = the base prompt, turn n = the task's n-th instruction). Several lines for
the same (task, turn) are samples: pass@k by the unbiased estimator. ANSWERS may be a
folder: every ``*.jsonl`` in it is scored on its own, the benchmark's
``<file>_<Category>_results.jsonl`` verdict files are read beside their answer file and
compared with engram's (the mode they were made in is told by their content: the
per-category mode grades Functionality Extension, the cumulative mode never does).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from replay.codeif._codeif import (
    FUNCTIONALITY_EXTENSION,
    follow,
    graded_turns,
    own_ids,
    prepared,
    test_ids,
)
from replay.codeif._score_report import summarize, tables
from replay.codeif.source import Iterative, load_iterative
from replay.core.errors import SourceError
from replay.sandbox.asserts import run_tests
from replay.sandbox.sandbox import Limits
from replay.sandbox.sandbox import mode as sandbox_mode

EXIT_USAGE = 2
RESULTS_SUFFIX = "_results.jsonl"


class ScoreError(ValueError):
    """Answers or tasks that cannot be read."""


@dataclass(frozen=True)
class Answer:
    task_id: str
    turn: int
    text: str
    layout: str  # codeif | engram
    sample: int = 0  # its rank among the answers to the same (task, turn), in file order


@dataclass
class Verdict:
    """One answer graded in one mode."""

    task_id: str
    turn: int
    category: str  # base, a CodeIF-Bench category, or "turn N"
    sample: int
    mode: str
    passed: bool | None  # None: the mode does not grade this turn
    tests: int
    tests_passed: int
    ia: float | None = None
    ca: float | None = None
    ifr: float | None = None
    benchmark: bool | None = None  # the benchmark's own verdict, when its results say
    ids: list[str] | None = field(default=None, repr=False)  # the tests it was graded with
    passed_ids: set[str] | None = field(default=None, repr=False)


def category_of(task: Iterative, turn: int) -> str:
    if turn == 0:
        return "base"
    return task.steps[turn].category or f"turn {turn}"


def _turn_of(task: Iterative, requirement: str | None) -> int | None:
    if requirement is None:
        return 0
    for n, step in enumerate(task.steps):
        if n and step.category == requirement:
            return n
    return None


def load_answers(path: Path, tasks: dict[str, Iterative]) -> tuple[list[Answer], list[str]]:
    """The answers of one file (samples ranked), and the problems met (skipped lines)."""
    answers: list[Answer] = []
    problems: list[str] = []
    seen: dict[tuple[str, int], int] = defaultdict(int)
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name}:{n}: not JSON ({exc})")
            continue
        if not isinstance(row, dict) or "task_id" not in row:
            problems.append(f"{path.name}:{n}: no task_id")
            continue
        task_id = str(row["task_id"])
        task = tasks.get(task_id)
        if task is None:
            problems.append(f"{path.name}:{n}: unknown task {task_id}")
            continue
        if "completion" in row:
            layout, text = "codeif", str(row["completion"])
            turn = _turn_of(task, row.get("requirement"))
            if turn is None:
                problems.append(f"{path.name}:{n}: task {task_id} has no requirement "
                                f"{row.get('requirement')!r}")
                continue
        elif "answer" in row and isinstance(row.get("turn"), int):
            layout, text, turn = "engram", str(row["answer"]), int(row["turn"])
            if not 0 <= turn < len(task.steps):
                problems.append(f"{path.name}:{n}: task {task_id} has no turn {turn}")
                continue
        else:
            problems.append(f"{path.name}:{n}: neither {{completion}} nor {{turn, answer}}")
            continue
        answers.append(Answer(task_id, turn, text, layout, seen[(task_id, turn)]))
        seen[(task_id, turn)] += 1
    return answers, problems


def answer_files(path: Path, skip: Path | None = None) -> list[Path]:
    """``path`` itself, or the answer files of a folder (not the benchmark's verdict files,
    nor ``skip``: the task file when it lives in the same folder)."""
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*.jsonl") if not p.name.endswith(RESULTS_SUFFIX)
                      and (skip is None or p.resolve() != skip.resolve()))
    raise ScoreError(f"{path}: no such file or folder")


def benchmark_results(answers: Path) -> tuple[str | None, dict[tuple[str, str], list[bool]]]:
    """The benchmark's own verdicts beside an answer file: (the mode they were made in,
    {(task id, category): verdicts in file order})."""
    found: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for file in sorted(answers.parent.glob(f"{answers.name}_*{RESULTS_SUFFIX}")):
        category = file.name[len(answers.name) + 1:-len(RESULTS_SUFFIX)]
        for line in file.read_text("utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "passed" in row and "task_id" in row:
                found[(str(row["task_id"]), category)].append(bool(row["passed"]))
    if not found:
        return None, {}
    extension = any(c == FUNCTIONALITY_EXTENSION for _, c in found)
    return ("category" if extension else "cumulative"), dict(found)


@dataclass(frozen=True)
class _Run:
    key: tuple[str, tuple[str, ...]]
    ids: list[str]


def grade(tasks: dict[str, Iterative], answers: list[Answer], mode: str, prepare: str,
          limits: Limits, concurrency: int = 1,
          cache: dict[Any, set[int]] | None = None) -> list[Verdict]:
    """Every answer graded in ``mode``; one sandbox run per distinct (code, tests)."""
    cache = {} if cache is None else cache
    runs: dict[int, _Run | None] = {}
    for i, answer in enumerate(answers):
        task = tasks[answer.task_id]
        turns = graded_turns(task, answer.turn, mode)
        if turns is None:
            runs[i] = None
            continue
        pairs = test_ids(task, turns)
        how = prepare if prepare != "auto" else answer.layout
        runs[i] = _Run((prepared(answer.text, how), tuple(t for _, t in pairs)),
                       [p[0] for p in pairs])
    todo = list(dict.fromkeys(r.key for r in runs.values() if r and r.key not in cache))
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for key, ok in zip(todo, pool.map(lambda k: run_tests(k[0], list(k[1]), limits),
                                          todo), strict=True):
            cache[key] = ok
    verdicts = []
    for i, answer in enumerate(answers):
        task, run = tasks[answer.task_id], runs[i]
        category = category_of(task, answer.turn)
        if run is None:
            verdicts.append(Verdict(answer.task_id, answer.turn, category, answer.sample, mode,
                                    None, 0, 0))
            continue
        ok = cache[run.key]
        verdicts.append(Verdict(answer.task_id, answer.turn, category, answer.sample, mode,
                                bool(run.ids) and len(ok) == len(run.ids), len(run.ids),
                                len(ok), ids=run.ids, passed_ids={run.ids[j] for j in ok}))
    _follow(tasks, verdicts, mode)
    return verdicts


def _follow(tasks: dict[str, Iterative], verdicts: list[Verdict], mode: str) -> None:
    """IA (every mode), CA and IFR (cumulative and all: CodeIF-Bench's definitions need the
    earlier turns' tests) along each conversation (task, sample)."""
    chains: dict[tuple[str, int], dict[int, Verdict]] = defaultdict(dict)
    for v in verdicts:
        chains[(v.task_id, v.sample)].setdefault(v.turn, v)
    for (task_id, _), by_turn in chains.items():
        task = tasks[task_id]
        turns = range(len(task.steps))
        got = [by_turn.get(n) for n in turns]
        scores = follow([own_ids(task, n) for n in turns],
                        [v.ids if v else None for v in got],
                        [v.passed_ids if v else None for v in got])
        for v, s in zip(got, scores, strict=True):
            if v is None or s is None:
                continue
            v.ia = s.ia
            if mode != "category":
                v.ca, v.ifr = s.ca, s.ifr


def compare(verdicts: list[Verdict], results: dict[tuple[str, str], list[bool]]) -> None:
    for v in verdicts:
        found = results.get((v.task_id, v.category), [])
        if v.passed is not None and v.sample < len(found):
            v.benchmark = found[v.sample]


def as_row(v: Verdict) -> dict[str, Any]:
    return {f.name: getattr(v, f.name) for f in fields(v) if f.repr}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram replay score",
        description="Grade answers produced elsewhere (CodeIF-Bench's published multi-round "
                    "outputs, or {task_id, turn, answer} JSONL) with engram's harness, "
                    "without any model; per-requirement and per-turn pass counts.")
    parser.add_argument("answers", type=Path, help="an answer file, or a folder of them")
    parser.add_argument("--tasks", type=Path, required=True,
                        help="the tasks: CodeIF-Bench's function-level JSONL, or our "
                             "iterative JSON")
    parser.add_argument("--mode", choices=["category", "cumulative", "both"], default="both",
                        help="category: base tests + the requirement's (Functionality "
                             "Extension alone); cumulative: base + every earlier turn's, "
                             "Functionality Extension skipped")
    parser.add_argument("--code-prep", choices=["auto", "codeif", "engram"], default="auto",
                        help="codeif: first ```python block, indented docstrings and blank "
                             "lines stripped (the benchmark's); engram: every fenced block; "
                             "auto: codeif for CodeIF-Bench's layout, engram for ours")
    parser.add_argument("--test-timeout", type=float, default=3.0,
                        help="seconds per answer's test run (the benchmark's default: 3)")
    parser.add_argument("--samples", type=int, default=None,
                        help="answers per (task, turn): pass@1 and pass@N by the unbiased "
                             "estimator (default: the most any item has)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="write every verdict as JSON")
    return parser


def score_files(files: Iterable[Path], tasks: dict[str, Iterative], args: argparse.Namespace,
                ) -> dict[str, Any]:
    modes = ["category", "cumulative"] if args.mode == "both" else [args.mode]
    limits = Limits(timeout=args.test_timeout)
    out: dict[str, Any] = {}
    for file in files:
        answers, problems = load_answers(file, tasks)
        their_mode, results = benchmark_results(file)
        cache: dict[Any, set[int]] = {}
        verdicts: list[Verdict] = []
        for mode in modes:
            graded = grade(tasks, answers, mode, args.code_prep, limits, args.concurrency, cache)
            if mode == their_mode:
                compare(graded, results)
            verdicts += graded
        out[str(file)] = {"answers": len(answers), "problems": problems,
                          "benchmark_mode": their_mode,
                          "verdicts": [as_row(v) for v in verdicts],
                          "summary": summarize([as_row(v) for v in verdicts], args.samples)}
    return out


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    args = build_parser().parse_args(argv)
    console, errors = Console(), Console(stderr=True)
    try:
        tasks = {t.id: t for t in load_iterative(args.tasks)}
        files = answer_files(args.answers, args.tasks)
    except (SourceError, ScoreError, OSError) as exc:
        errors.print(f"engram replay score: {exc}")
        return EXIT_USAGE
    if not files:
        errors.print(f"engram replay score: no answer files in {args.answers}")
        return EXIT_USAGE
    scored = score_files(files, tasks, args)
    for file, data in scored.items():
        console.print(f"[bold]{file}[/bold]: {data['answers']} answers"
                      + (f", the benchmark's verdicts beside them ({data['benchmark_mode']} "
                         "mode)" if data["benchmark_mode"] else ""))
        for table in tables(data):
            console.print(table)
        for problem in data["problems"]:
            errors.print(f"[yellow]skipped {problem}[/yellow]")
    console.print(f"sandbox: {sandbox_mode()}", markup=False)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"settings": {k: str(v) for k, v in vars(args).items()},
                                        "sandbox": sandbox_mode(), "files": scored}, indent=1))
        errors.print(f"verdicts: {args.out}")
    return 0
