"""Which benchmark reads a file or folder, and what the run loop asks of any source.

Each registered benchmark (``replay.benchmark``) says how surely it reads a path; the
surest reads it. engram's own:

- a folder, or a JSON file with ``samples`` and ``topics``: LoCoEval-style outlines
  (``replay.locoeval``);
- a Claude Code, Codex CLI or Aider session, or an engram transcript (``.jsonl``): a
  recorded session (``replay.sessions``);
- CodeIF-Bench JSONL, or our ``{"tasks": [...]}`` JSON: iterative tasks (``replay.codeif``);
- ``{"kind": "qa"}`` or LongCodeBench's questions: ``replay.longcodeqa``;
- ``{"kind": "experience"}``: SWE-ContextBench-style chains (``replay.swecontext``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.benchmark import benchmarks
from replay.core.errors import SourceError
from replay.core.names import safe_name

Source = Any  # whatever a benchmark loads: Outline, Recorded, Iterative, QASet, ExperienceSet...


def load_source(path: Path) -> list[Source]:
    """Whatever ``path`` holds, read by the benchmark surest to know it."""
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    bench, probe = benchmarks.claim(path)
    if bench is None:
        if probe.error is not None:
            raise SourceError(probe.error)
        raise SourceError(f"{path}: neither a transcript, an outline nor an iterative task file")
    return bench.load(path)


def source_id(source: Source) -> str:
    return safe_name(str(source.id))


def source_kind(source: Source) -> str:
    """The ``kind`` of a source's result rows."""
    return benchmarks.of(source).kind(source)


def needs_preparation(source: Source) -> bool:
    """Whether a source's pairs share a prepared repository (copy + index)."""
    return benchmarks.of(source).prepared(source)
