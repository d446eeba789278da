"""A benchmark behind one small interface, and the registry that finds them.

A benchmark is what Inspect calls a task (a dataset, a solver, a scorer) kept in one folder
as lm-evaluation-harness keeps each of its tasks: here, one package under ``replay/`` with a
``Benchmark`` object that says

- which files or folders hold its sources (``claims``: 0 not mine, 1 maybe, 2 surely;
  the surest claim wins, ties go to the first registered) and how to read them (``load``);
- which sources are its own (``owns``) and what kind their result rows have (``kind``);
- whether a source's pairs share a prepared copy of its repository (``prepared``) and
  how that copy is made (``copy_repository``: an outline's without its targets), and
  why a source cannot run at all (``problem``: checked before anything is written);
- any backend of its own (``backend``: LoCoEval's oracle, LongCodeQA's whole repository;
  ``own_backends`` names those no registry has, with what they need);
- how one (source, backend) pair is driven and scored into its result row (``drive``);
- its own command-line options (``add_arguments``, in a group of ``engram replay``'s
  parser) and their values as the run's config carries them (``options``: plain values,
  under the benchmark's name in ``ReplayConfig.benchmark_options``, which travels to Ray
  workers as it is; ``options_of`` reads them back), checked before the run (``check``,
  with the models it will call: ``models``), and what it adds to the results' settings
  (``settings``) and to the console after the run (``notes``);
- its numbers in each backend's row of the report (``scores`` of one backend's pairs;
  ``finish`` over all the rows, e.g. oracle's by definition; ``columns`` and ``legend``
  of the main table), its own keys in the run's summary (``summary``: top-level keys of
  results.json) and its own tables (``report``: rich renderables, in registry order);
- subcommands of its own (``commands``: ``engram replay demo``, ``engram replay score``);
- optionally, how its sources are built from a repository (``build``, what ``engram
  replay build --benchmark NAME`` calls; a benchmark without it cannot build).

Benchmarks are found through the entry-point group ``engram.benchmarks`` (``name =
"module:attr"``, the attribute a Benchmark object or a class made without arguments);
engram's own are in ``BUILTINS`` alone (found the same from a source tree and an
install). Listing names imports nothing; a benchmark's module is
imported when a source is probed or driven. The registry's machinery is
``memory.registry``, shared with the memory backends.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memory.registry import EntryPointRegistry, Spec

if TYPE_CHECKING:
    from memory.backends import BackendEnv
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.core.runner import Replay, ReplayConfig

GROUP = "engram.benchmarks"

# engram's own benchmarks, in the order ties are broken: the one table of them
# (pyproject.toml does not repeat it); a third party's come through GROUP.
BUILTINS: dict[str, str] = {
    "sessions": "replay.sessions.benchmark:BENCHMARK",
    "swecontext": "replay.swecontext.benchmark:BENCHMARK",
    "longcodeqa": "replay.longcodeqa.benchmark:BENCHMARK",
    "locoeval": "replay.locoeval.benchmark:BENCHMARK",
    "codeif": "replay.codeif.benchmark:BENCHMARK",
    "agentic": "replay.agentic.benchmark:BENCHMARK",
    "locomo": "replay.locomo.benchmark:BENCHMARK",
}

Tick = Callable[[int, int], None]  # (done, total) of one pair


class BenchmarkError(RuntimeError):
    """A registered benchmark that cannot be imported, or a source no benchmark owns."""


_UNREAD = object()


@dataclass
class Probe:
    """What a path holds, read once for every benchmark's ``claims``: ``data`` is the parsed
    JSON of a file that is not ``.jsonl`` (``error`` says why not, if it could not be
    read), ``head`` the first record of a ``.jsonl`` file ({} if that is not JSON)."""

    path: Path
    error: str | None = None
    _data: Any = field(default=_UNREAD, repr=False)

    @property
    def is_dir(self) -> bool:
        return self.path.is_dir()

    @property
    def suffix(self) -> str:
        return self.path.suffix

    @cached_property
    def data(self) -> Any:
        if self.is_dir or self.suffix == ".jsonl":
            return None
        try:
            return json.loads(self.path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.error = f"{self.path}: cannot read: {exc}"
            return None

    @cached_property
    def head(self) -> Any:
        if self.is_dir or self.suffix != ".jsonl":
            return None
        try:
            text = self.path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:  # its loader says what is wrong
            self.error = f"{self.path}: cannot read: {exc}"
            return {}
        first = next((line for line in text.splitlines() if line.strip()), "")
        try:
            return json.loads(first)
        except json.JSONDecodeError:
            return {}


@runtime_checkable
class Benchmark(Protocol):
    name: str
    own_backends: Mapping[str, str]  # backend name -> what it needs ("an outline source")
    columns: tuple[tuple[str, str, int], ...]  # main table: (header, row key, digits)

    def claims(self, probe: Probe) -> int: ...

    def load(self, path: Path) -> list[Any]: ...

    def owns(self, source: Any) -> bool: ...

    def kind(self, source: Any) -> str: ...

    def prepared(self, source: Any) -> bool: ...

    def copy_repository(self, repo: Path, source: Any, dest: Path) -> None: ...

    def problem(self, replay: Replay, source: Any) -> str | None: ...

    def backend(self, name: str, env: BackendEnv, source: Any) -> Any | None: ...

    async def drive(self, replay: Replay, source: Any, name: str, repo: RepoIndex | None,
                    result: dict[str, Any], tick: Tick) -> Agent | None: ...

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def options(self, args: argparse.Namespace) -> dict[str, Any]: ...

    def check(self, config: ReplayConfig, sources: list[Any]) -> None: ...

    def models(self, config: ReplayConfig) -> list[str]: ...

    def settings(self, config: ReplayConfig) -> dict[str, str]: ...

    def notes(self, config: ReplayConfig, pairs: list[dict[str, Any]]) -> list[str]: ...

    def scores(self, rows: list[dict[str, Any]]) -> dict[str, Any]: ...

    def finish(self, per: dict[str, dict[str, Any]]) -> None: ...

    def legend(self, summary: dict[str, Any]) -> str: ...

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]: ...

    def commands(self) -> dict[str, Callable[[list[str]], int]]: ...

    def report(self, summary: dict[str, Any]) -> list[Any]: ...


def options_of(config: Any, name: str) -> Mapping[str, Any]:
    """Benchmark ``name``'s options in a run's config ({} when it has none)."""
    return (getattr(config, "benchmark_options", None) or {}).get(name) or {}


@dataclass(frozen=True)
class BuildRequest:
    """What ``engram replay build`` asks of a benchmark that builds its sources: read
    ``repo``, write the sources under ``out``. The optional hook is
    ``build(request) -> list[str]`` (the lines to print); it raises ``ValueError`` or
    ``OSError`` with a message on a request it cannot fulfil."""

    repo: Path
    out: Path
    seed: int = 0
    count: int | None = None  # how many to build (None: the benchmark's default)
    targets: Path | None = None  # JSON target functions with their tests, where needed
    grid: bool = False  # LoCoEval's even grid of conversation lengths and sample counts
    model: str | None = None  # a model the builder may call (None: no model)


def builder(bench: Benchmark) -> Callable[[BuildRequest], list[str]] | None:
    """The benchmark's optional ``build`` hook, or None if it cannot build sources."""
    hook = getattr(bench, "build", None)
    return hook if callable(hook) else None


class BaseBenchmark:
    """Defaults for the optional parts: no shared repository, no problem, no own backend,
    no report rows of its own, rows of kind ``name``."""

    name = "benchmark"
    own_backends: Mapping[str, str] = MappingProxyType({})
    columns: tuple[tuple[str, str, int], ...] = ()

    def kind(self, source: Any) -> str:
        return str(getattr(source, "kind", self.name))

    def prepared(self, source: Any) -> bool:
        return False

    def copy_repository(self, repo: Path, source: Any, dest: Path) -> None:
        raise BenchmarkError(f"benchmark {self.name!r} says its sources are prepared but "
                             "does not say how to copy their repository (copy_repository)")

    def problem(self, replay: Replay, source: Any) -> str | None:
        return None

    def backend(self, name: str, env: BackendEnv, source: Any) -> Any | None:
        return None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """No options of its own."""

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        return {}

    def check(self, config: ReplayConfig, sources: list[Any]) -> None:
        """Nothing to check before the run, given its options and the run's sources
        (raise ``ValueError`` with a message if so)."""

    def models(self, config: ReplayConfig) -> list[str]:
        """Models it calls beside the answer model (checked before the run, priced)."""
        return []

    def settings(self, config: ReplayConfig) -> dict[str, str]:
        return {}

    def notes(self, config: ReplayConfig, pairs: list[dict[str, Any]]) -> list[str]:
        return []

    def scores(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Its numbers in one backend's row of the report, from that backend's pairs (all
        of them: those of other benchmarks have none of its keys)."""
        return {}

    def finish(self, per: dict[str, dict[str, Any]]) -> None:
        """Adjust the backends' rows once all are made (none by default)."""

    def legend(self, summary: dict[str, Any]) -> str:
        return ""

    def summary(self, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        return {}

    def commands(self) -> dict[str, Callable[[list[str]], int]]:
        """Subcommands of ``engram replay`` (name -> main(argv) -> exit code)."""
        return {}

    def report(self, summary: dict[str, Any]) -> list[Any]:
        return []


BenchmarkSpec = Spec  # a registered benchmark: name, "module:attr" target, origin


class Benchmarks(EntryPointRegistry):
    """Benchmark names -> specs, discovered once (``memory.registry``: the built-ins first,
    in the order ties are broken, never taken over); the objects made on first use."""

    kind = "benchmark"
    unknown = BenchmarkError
    failed = BenchmarkError

    def __init__(self, group: str = GROUP) -> None:
        super().__init__(group, BUILTINS, builtins_first=True)
        self._made: dict[str, Benchmark] = {}

    def get(self, name: str) -> Benchmark:
        if name not in self._made:
            found = self.load(name)
            made = found() if isinstance(found, type) else found
            if not isinstance(made, Benchmark):
                target = self.spec(name).target
                raise BenchmarkError(f"benchmark {name!r} ({target}) is not a Benchmark")
            self._made[name] = made
        return self._made[name]

    def all(self) -> list[Benchmark]:
        return [self.get(name) for name in self.names()]

    def own_backends(self) -> dict[str, str]:
        """The backends only some benchmark builds (oracle), with what each needs."""
        return {name: needs for bench in self.all()
                for name, needs in bench.own_backends.items()}

    def claim(self, path: Path) -> tuple[Benchmark | None, Probe]:
        """The benchmark surest to read ``path`` (None: nobody's), and the probe."""
        probe = Probe(Path(path))
        best, sure = None, 0
        for bench in self.all():
            level = bench.claims(probe)
            if level > sure:
                best, sure = bench, level
        return best, probe

    def of(self, source: Any) -> Benchmark:
        """The benchmark a loaded source belongs to."""
        for bench in self.all():
            if bench.owns(source):
                return bench
        raise BenchmarkError(f"no benchmark owns a {type(source).__name__} source")


benchmarks = Benchmarks()
