"""Re-drive sources against backends, one (source, backend) pair at a time.

Each pair gets its own LLM ledger (so tokens and dollars are the pair's, memory
operations included), its own transcript under ``OUT/conversations/``, and a line in
``OUT/pairs.jsonl`` when it finishes — which is what ``--resume`` reads to skip
finished pairs. Outlines are prepared once (stubbed copy + index) and shared by
their pairs. Which process runs a pair is the executor's business
(``replay.core.executors``: in this process, or as Ray tasks); OUT is any fsspec location.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.backends import BackendEnv, Registry, registry
from memory.index.embed import Embedder, get_embedder
from memory.index.repo import RepoIndex
from memory.llm.client import LLM
from memory.session import build_agent
from memory.settings import Settings
from memory.store import Store
from memory.turn.agent import Agent, AgentConfig, structured_counts
from replay.benchmark import benchmarks
from replay.core.cost import Budget, pair_cost
from replay.core.names import safe_name
from replay.core.output import Output, PairLog
from replay.core.ratelimit import RateLimits
from replay.core.sources import Source, source_id, source_kind
from replay.core.window import answer_llm
from replay.sandbox.sandbox import Limits

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]  # (pair label, done, total)


SAMPLE_TEMPERATURE = 0.8  # answers drawn for pass@k (Chen et al. 2021 sample at 0.2-0.8)


class ReplayError(ValueError):
    """A replay that cannot start (bad backend, missing repository...)."""


@dataclass
class ReplayConfig:
    backends: list[str]
    model: str
    out: Path | str  # a folder, or any fsspec URL (s3://..., memory://...)
    repo: Path | None = None  # the repository outlines were written for
    seed: int = 0
    concurrency: int = 1
    resume: bool = False
    limit: int | None = None
    max_tokens: int = 512
    judge_model: str | None = None  # a model that judges answers (benchmarks that use one)
    limits: Limits = field(default_factory=lambda: Limits(timeout=60.0))  # sandboxed tests
    backend_options: dict[str, object] = field(default_factory=dict)  # --backend-opt
    # each benchmark's own options (its CLI options' values, plain data), by its name:
    # ``replay.benchmark.options_of(config, name)``
    benchmark_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    executor: str = "local"  # local | ray (replay.core.executors)
    ray_address: str | None = None  # None: start a local Ray instance
    ray_cpus_per_task: float = 1.0  # Ray's CPU request per pair (below 1: LLM-bound pairs)
    budget_usd: float | None = None  # stop launching pairs past this projected cost
    rate_limits: RateLimits = field(default_factory=RateLimits)  # --rpm, per model
    samples: int = 1  # answers per iterative turn / per generation task (pass@k)
    store_uri: str | None = None  # shared LanceDB location of the pairs' stores (else temp)
    window: int | None = None  # the model window of every budget (None: the model's own;
    #                            0: unbounded; replay.core.window)
    settings: Settings | None = None  # the command's (memory.settings): installed by workers

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ReplayError(f"samples must be >= 1, not {self.samples}")
        if self.window is not None and self.window < 0:
            raise ReplayError(f"window must be 0 (unbounded) or a number of tokens, "
                              f"not {self.window}")

    @property
    def answer_temperature(self) -> float | None:
        """Answers are sampled at ``SAMPLE_TEMPERATURE`` when more than one is drawn."""
        return SAMPLE_TEMPERATURE if self.samples > 1 else None


@dataclass
class Prepared:
    """An outline's stubbed repository and its index."""

    copy: Path
    index: RepoIndex


class Replay:
    def __init__(self, config: ReplayConfig, *, embedder: Embedder | None = None,
                 backends: Registry = registry, progress: Progress | None = None,
                 transcripts: Path | None = None, scratch: Path | None = None) -> None:
        self.config = config
        self.output = Output(config.out)
        self.pairlog = PairLog(self.output)
        self.embedder = embedder or get_embedder()
        self.backends = backends
        self.progress = progress
        # scratch: where the temp folder goes (a Ray worker's: under its run's folder)
        self._tmp = tempfile.TemporaryDirectory(prefix="engram-replay-", dir=scratch)
        self.work = Path(self._tmp.name)
        local = self.output.local
        # where this process writes transcripts: the run folder itself when it is local,
        # else a temp folder whose files are published to the output after each pair
        self.transcripts = transcripts or (local / "conversations" if local is not None
                                           else self.work / "conversations")
        self.budget: Budget | None = None  # the last run's (its report goes to results)
        self._prepared: dict[str, Prepared] = {}
        # what a benchmark keeps for the run, under its name (locoeval: its judges)
        self.shared: dict[str, Any] = {}
        self.lock = asyncio.Lock()
        self.own_backends = benchmarks.own_backends()  # oracle: what each needs
        self._made: dict[tuple[str, str], Agent] = {}  # (source, backend) -> its last agent
        known = set(backends.names()) | set(self.own_backends)
        unknown = [b for b in config.backends if b not in known]
        if unknown:
            raise ReplayError(f"unknown backend(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(known))}")

    # -- preparation ---------------------------------------------------------------------
    def outline_repo(self, outline: Any) -> Path:
        """The repository an outline (or a question or chain file) names, relative to its
        file, unless ``--repo`` is given."""
        if self.config.repo is not None:
            return self.config.repo
        what = source_kind(outline)
        if not outline.repo:
            raise ReplayError(f"{what} {outline.id} names no repository; pass --repo")
        path = Path(outline.repo)
        if not path.is_absolute() and outline.source is not None:
            path = outline.source.parent / path
        if not path.is_dir():
            raise ReplayError(f"{what} {outline.id}: repository {path} not found; pass --repo")
        return path

    def prepare(self, outline: Any) -> Prepared:
        """The source's repository as its pairs share it, copied by its benchmark (an
        outline's: without its targets; a question set's: a plain copy, its own git
        repository, so the index holds that repository alone)."""
        key = source_id(outline)
        if key not in self._prepared:
            benchmarks.of(outline).copy_repository(self.outline_repo(outline), outline,
                                                   self.work / key / "repo")
            self.adopt(key)
        return self._prepared[key]

    def adopt(self, key: str) -> Prepared:
        """The prepared source under ``work/key`` (made here, or unpacked from a worker
        that made it: the index is answered from its manifest, nothing re-embedded)."""
        copy = self.work / key / "repo"
        index = RepoIndex(copy, Store(self.work / key / "index.lance"), self.embedder)
        index.refresh()
        self._prepared[key] = Prepared(copy, index)
        return self._prepared[key]

    def plain_index(self, path: Path) -> RepoIndex:
        """The index of a repository as it is (recorded sessions)."""
        key = f"plain-{safe_name(str(path))}"
        if key not in self._prepared:
            index = RepoIndex(path, Store(self.work / key / "index.lance"), self.embedder)
            index.refresh()
            self._prepared[key] = Prepared(path, index)
        return self._prepared[key].index

    # -- one pair --------------------------------------------------------------------------
    def agent(self, source: Source, name: str, repo: RepoIndex | None, *,
               llm: LLM | None = None, part: str = "") -> Agent:
        """A fresh agent; ``part`` names one of a pair's several conversations (its
        transcript file), ``llm`` shares one ledger among them."""
        llm = llm or answer_llm(self.config.model, self.config.window)
        pair = f"{source_id(source)}__{name}" + (f"__{part}" if part else "")

        def backend(env: BackendEnv) -> Any:
            made = benchmarks.of(source).backend(name, env, source)  # oracle, qa's full
            if made is None and name in self.own_backends:  # another benchmark's own
                raise ReplayError(f"the {name} backend needs {self.own_backends[name]}")
            return made if made is not None else self.backends.create(name, env)

        agent = build_agent(backend, llm, data_dir=self.work / "homes" / pair,
                            session_id=pair, embedder=self.embedder, repo=repo,
                            store_uri=self._store_uri(pair),
                            options=self.config.backend_options,
                            transcript=self.transcripts / f"{pair}.jsonl",
                            config=AgentConfig(
                                max_answer_tokens=self.config.max_tokens,
                                answer_temperature=self.config.answer_temperature))
        agent.start_session(pair, "replay")
        self._made[(source_id(source), name)] = agent
        return agent

    def _store_uri(self, pair: str) -> str:
        """The pair's own place in the shared store (a fresh one per run: a resumed or
        repeated pair never sees an earlier run's memories); '' without ``store_uri``."""
        if not self.config.store_uri:
            return ""
        return f"{self.config.store_uri.rstrip('/')}/{pair}-{uuid.uuid4().hex[:8]}"

    def _tick(self, label: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(label, done, total)

    async def run_pair(self, source: Source, name: str) -> dict[str, Any]:
        """One (source, backend) pair, driven and scored by the source's benchmark."""
        started = time.time()
        label = f"{source_id(source)} · {name}"
        result: dict[str, Any] = {"source": source_id(source), "kind": source_kind(source),
                                  "backend": name, "model": self.config.model, "error": None}
        bench = benchmarks.of(source)
        agent = None
        try:
            repo = None
            if bench.prepared(source):
                async with self.lock:
                    prepared = await asyncio.to_thread(self.prepare, source)
                repo = prepared.index
            agent = await bench.drive(self, source, name, repo, result,
                                      lambda done, total: self._tick(label, done, total))
            if getattr(bench, "whole_row", False):  # its row is complete as it is
                result["seconds"] = round(time.time() - started, 3)
                return result
            if self.config.samples > 1:
                result["samples"] = self.config.samples
                result["temperature"] = self.config.answer_temperature
            if agent is not None:
                result["turns"] = len(agent.turns)
                result["failed_turns"] = sum(1 for t in agent.turns if not t.ok)
        except Exception as exc:  # one pair failing must not end the run
            log.exception("replay pair %s failed", label)
            result["error"] = f"{type(exc).__name__}: {exc}"
        # a drive that failed returned no agent: what its agent spent is still the pair's
        made = self._made.pop((source_id(source), name), None)
        agent = agent if agent is not None else made
        if agent is not None:
            # structured calls, retries, lenient parses, failures, skipped memory updates
            result["structured"] = structured_counts(agent.llm.stats.as_dict(),
                                                     agent.memory_issues)
            result["window"] = agent.llm.context_window()  # the budgets' base (local: a setting)
            settings = getattr(agent.backend, "settings", None)
            if callable(settings):  # how the backend ran (cards: which scorer, packing)
                result["backend_settings"] = settings()
            ledger = agent.llm.ledger
            result["tokens"] = ledger.tokens
            result["usage"] = ledger.to_dict()
        result["cost"] = pair_cost(result.get("usage"), result.get("user_usage"),
                                   result.get("judge_usage"))
        if agent is not None and agent.transcript is not None:
            agent.transcript.close()
        result["seconds"] = round(time.time() - started, 3)
        self._tick(label, 1, 1)
        return result

    # -- the run -----------------------------------------------------------------------------
    def transcript_files(self, row: dict[str, Any]) -> list[Path]:
        """The transcripts this process wrote for a pair: ``SOURCE__BACKEND.jsonl``, and
        ``SOURCE__BACKEND__PART.jsonl`` for a pair of several conversations."""
        pair = f"{row['source']}__{row['backend']}"
        if not self.transcripts.is_dir():
            return []
        return sorted(p for p in self.transcripts.iterdir()
                      if p.name == f"{pair}.jsonl"
                      or (p.name.startswith(f"{pair}__") and p.suffix == ".jsonl"))

    def publish(self, row: dict[str, Any], files: dict[str, bytes] | None = None) -> None:
        """A finished pair into the output: its transcripts (unless written there in place:
        ``files`` come from a worker, else they are this process's), then its line in
        ``pairs.jsonl`` — in that order, so a pair on record always has its transcripts."""
        if files is None and self.transcripts != self._in_place():
            files = {p.name: p.read_bytes() for p in self.transcript_files(row)}
        for name, data in (files or {}).items():
            self.output.write_bytes(data, "conversations", name)
        self.pairlog.append(row)

    def _in_place(self) -> Path | None:
        local = self.output.local
        return local / "conversations" if local is not None else None

    def finished(self) -> set[tuple[str, str]]:
        return self.pairlog.finished()

    def read_pairs(self) -> list[dict[str, Any]]:
        """Every finished pair on record (the latest row of each)."""
        return self.pairlog.latest()

    async def run(self, sources: list[Source], executor: Any = None) -> list[dict[str, Any]]:
        """Run every (source, backend) pair not on record yet (with ``--resume``), by
        ``executor`` (default: the config's), within ``--budget-usd``."""
        from replay.core.choose import make_executor

        if self.config.limit is not None:
            sources = sources[: self.config.limit]
        problems = [p for s in sources
                    if (p := benchmarks.of(s).problem(self, s)) is not None]
        if problems:  # before anything is written
            raise ReplayError("; ".join(problems))
        self.output.makedirs("conversations")
        if not self.config.resume:
            self.pairlog.clear()
        skip = self.finished() if self.config.resume else set()
        todo = [(s, b) for s in sources for b in self.config.backends
                if (source_id(s), b) not in skip]
        wanted = {(source_id(s), b) for s in sources for b in self.config.backends}
        on_record = [r for r in self.read_pairs() if (r.get("source"), r.get("backend")) in wanted]
        self.budget = Budget.from_rows(self.config.budget_usd, on_record)
        await (executor or make_executor(self.config)).run(self, todo, self.budget)
        return [r for r in self.read_pairs() if (r.get("source"), r.get("backend")) in wanted]

    def close(self) -> None:
        self._tmp.cleanup()
