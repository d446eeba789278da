"""Re-drive sources against backends, one (source, backend) pair at a time.

Each pair gets its own LLM ledger (so tokens and dollars are the pair's, memory
operations included), its own transcript under ``OUT/conversations/``, and a line in
``OUT/pairs.jsonl`` when it finishes — which is what ``--resume`` reads to skip
finished pairs. Outlines are prepared once (stubbed copy + index) and shared by
their pairs. Which process runs a pair is the executor's business
(``replay.executors``: in this process, or as Ray tasks); OUT is any fsspec location.
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

from memory.agent import Agent, AgentConfig, structured_counts
from memory.backends import BackendEnv, Registry, registry
from memory.embed import Embedder, get_embedder
from memory.llm import LLM, LLMConfig
from memory.repo import RepoIndex
from memory.store import Store
from memory.transcript import TranscriptWriter
from replay._codeif import IterativeOptions
from replay._qarepo import RepoTextBackend
from replay.cost import Budget, pair_cost
from replay.drive import converse, iterate
from replay.experience import SETTINGS, ExperienceSet
from replay.experience_run import run_experience_tasks, run_settings
from replay.judge import THRESHOLD, EmbedJudge, LLMJudge, judge_accuracy
from replay.matcher import TaskPacks
from replay.oracle import OracleBackend
from replay.outline import Outline
from replay.output import Output, PairLog
from replay.prepare import stubbed_copy
from replay.qa import QASet
from replay.qa_run import ask_brackets
from replay.ratelimit import RateLimits
from replay.sandbox import Limits
from replay.sandbox import mode as sandbox_mode
from replay.sources import Iterative, Recorded, Source
from replay.tasks import as_dict, outline_tasks, safe_name
from replay.window import answer_llm

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
    judge_threshold: float = THRESHOLD
    mock_user: str = "template"  # template | llm (the CLI picks: replay.mockuser.choose_user)
    mock_user_why: str = ""  # why that user: "offline default", "chosen"... (in the results)
    user_model: str | None = None  # the LLM mock user's model (default: the answer model)
    reference_queries: Path | None = None  # real questions: LoCoEval's style references
    revision_cues: float = 0.0  # share of replacing items voiced with a cue (0: LoCoEval's)
    judge_model: str | None = None  # set: an LLM judges set matches, else MiniLM
    limits: Limits = field(default_factory=lambda: Limits(timeout=60.0))
    iterative_limits: Limits = field(default_factory=lambda: Limits(timeout=10.0))
    iterative: IterativeOptions = field(default_factory=IterativeOptions)  # mode, code prep
    backend_options: dict[str, object] = field(default_factory=dict)  # --backend-opt
    experience_settings: tuple[str, ...] = SETTINGS  # SWE-ContextBench's settings to run
    executor: str = "local"  # local | ray (replay.executors)
    ray_address: str | None = None  # None: start a local Ray instance
    ray_cpus_per_task: float = 1.0  # Ray's CPU request per pair (below 1: LLM-bound pairs)
    budget_usd: float | None = None  # stop launching pairs past this projected cost
    rate_limits: RateLimits = field(default_factory=RateLimits)  # --rpm, per model
    samples: int = 1  # answers per iterative turn / per generation task (pass@k)
    store_uri: str | None = None  # shared LanceDB location of the pairs' stores (else temp)
    window: int | None = None  # the model window of every budget (None: the model's own;
    #                            0: unbounded; replay.window)

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


def source_id(source: Source) -> str:
    return safe_name(str(source.id))


def source_kind(source: Source) -> str:
    return "outline" if isinstance(source, Outline) else source.kind


def needs_preparation(source: Source | Any) -> bool:
    """Whether a source's pairs share a prepared repository (copy + index)."""
    return isinstance(source, Outline | QASet | ExperienceSet)


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
        self.embed_judge = EmbedJudge(self.embedder, config.judge_threshold)
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
        self._judge_checks: dict[str, dict[str, Any]] = {}  # per outline: judge accuracy
        self._lock = asyncio.Lock()
        known = set(backends.names()) | {"oracle"}
        unknown = [b for b in config.backends if b not in known]
        if unknown:
            raise ReplayError(f"unknown backend(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(known))}")

    # -- preparation ---------------------------------------------------------------------
    def outline_repo(self, outline: Outline | QASet | Any) -> Path:
        """The repository an outline (or a question or chain file) names, relative to its
        file, unless ``--repo`` is given."""
        if self.config.repo is not None:
            return self.config.repo
        what = "outline" if isinstance(outline, Outline) else outline.kind
        if not outline.repo:
            raise ReplayError(f"{what} {outline.id} names no repository; pass --repo")
        path = Path(outline.repo)
        if not path.is_absolute() and outline.source is not None:
            path = outline.source.parent / path
        if not path.is_dir():
            raise ReplayError(f"{what} {outline.id}: repository {path} not found; pass --repo")
        return path

    def prepare(self, outline: Outline | QASet | ExperienceSet) -> Prepared:
        """The outline's repository without its targets (a question set's: a plain copy,
        its own git repository, so the index holds that repository alone)."""
        key = source_id(outline)
        if key not in self._prepared:
            targets: list[Any] = []
            if isinstance(outline, Outline):
                targets = [(s.path, s.function, s.tests) for s in outline.samples]
            elif isinstance(outline, ExperienceSet):  # every task's function is written
                targets = [(t.path, t.function, t.tests)
                           for t in (*outline.experience, *outline.related)]
            stubbed_copy(self.outline_repo(outline), targets, self.work / key / "repo")
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

    def missing_repository(self, source: Recorded) -> str | None:
        """Why a recorded session cannot be re-driven with its repository, or None. A
        session recorded without one (app sessions before the session record named it)
        is never replayed silently without code."""
        if self.config.repo is not None:
            return None
        if not source.repo:
            return (f"session {source.id} does not record its repository (recorded before "
                    "engram wrote it in the session record); pass --repo PATH, the "
                    "repository it was about")
        if not Path(source.repo).is_dir():
            return (f"session {source.id}: its repository {source.repo} is not there any "
                    "more; pass --repo PATH")
        return None

    def recorded_repo(self, source: Recorded) -> Path | None:
        path = self.config.repo or (Path(source.repo) if source.repo else None)
        return path if path is not None and path.is_dir() else None

    # -- one pair --------------------------------------------------------------------------
    def _agent(self, source: Source, name: str, repo: RepoIndex | None, *,
               llm: LLM | None = None, part: str = "") -> Agent:
        """A fresh agent; ``part`` names one of a pair's several conversations (its
        transcript file), ``llm`` shares one ledger among them."""
        llm = llm or answer_llm(self.config.model, self.config.window)
        pair = f"{source_id(source)}__{name}" + (f"__{part}" if part else "")
        env = BackendEnv(llm=llm, embedder=self.embedder, repo=repo,
                         data_dir=self.work / "homes" / pair, session_id=pair,
                         store_uri=self._store_uri(pair),
                         options=dict(self.config.backend_options))
        if name == "oracle":
            if not isinstance(source, Outline):
                raise ReplayError("the oracle backend needs an outline source")
            backend: Any = OracleBackend(env, source)
        elif name == "full" and isinstance(source, QASet):  # LongCodeBench's baseline
            backend = RepoTextBackend(env)
        else:
            backend = self.backends.create(name, env)
        writer = TranscriptWriter(self.transcripts / f"{pair}.jsonl")
        agent = Agent(backend, llm, env, writer,
                      config=AgentConfig(max_answer_tokens=self.config.max_tokens,
                                         answer_temperature=self.config.answer_temperature))
        agent.start_session(pair, "replay")
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
        started = time.time()
        label = f"{source_id(source)} · {name}"
        result: dict[str, Any] = {"source": source_id(source), "kind": source_kind(source),
                                  "backend": name, "model": self.config.model, "error": None}
        agent = None
        try:
            repo = None
            if needs_preparation(source):
                async with self._lock:
                    prepared = await asyncio.to_thread(self.prepare, source)
                repo = prepared.index
            elif isinstance(source, Recorded) and self.recorded_repo(source) is not None:
                async with self._lock:
                    repo = await asyncio.to_thread(self.plain_index,
                                                   self.recorded_repo(source))  # type: ignore[arg-type]
            if isinstance(source, ExperienceSet):
                await self._experience(source, name, repo, label, result)
                result["seconds"] = round(time.time() - started, 3)
                return result
            agent = self._agent(source, name, repo)
            if isinstance(source, Outline):
                await converse(agent, source, repo, self.config, self.embedder, result,
                               lambda done, total: self._tick(label, done, total))
                judge = self._judge().for_outline(source)  # knows each unit's distractors
                packs = TaskPacks(agent)
                scores = await outline_tasks(agent, source, judge,
                                             self.outline_repo(source), self.config.limits,
                                             self.config.samples)
                result["scores"] = as_dict(scores)
                # reader-free context metrics by the judge's matcher, exact-text ones beside
                for key, value in packs.metrics(self.embed_judge.matcher, source).items():
                    result["scores"][f"{key}_exact"] = result["scores"].get(key)
                    result["scores"][key] = value
                result["subset"], result["k"] = source.subset, len(source.samples)
                result["l"] = len(source.queries())  # LoCoEval's conversation length
                if source_id(source) not in self._judge_checks:
                    self._judge_checks[source_id(source)] = await judge_accuracy(judge, source)
                result["judge_check"] = self._judge_checks[source_id(source)]
                if isinstance(judge, LLMJudge):
                    result["judge_tokens"] = judge.llm.ledger.tokens
                    result["judge_usage"] = judge.llm.ledger.to_dict()
                    result["judge_fallbacks"] = judge.fallbacks
                    result["judge_stats"] = judge.stats()
            elif isinstance(source, Recorded):
                result["origin"], result["skipped_records"] = source.origin, source.skipped
                for n, query in enumerate(source.queries):
                    await agent.ask(query)
                    self._tick(label, n + 1, len(source.queries) + 1)
            elif isinstance(source, Iterative):
                result["iterative"] = await iterate(
                    agent, source, self.config.samples, self.config.iterative_limits,
                    self.config.iterative, lambda done, total: self._tick(label, done, total))
            elif isinstance(source, QASet):
                result["qa"] = await ask_brackets(
                    agent, source, self.config.seed,
                    lambda done, total: self._tick(label, done, total + 1))
            if isinstance(source, Iterative) or (isinstance(source, Outline)
                                                 and source.tasks.generate):
                result["sandbox"] = sandbox_mode()  # "bwrap", or "weak" where it fell back
            if self.config.samples > 1:
                result["samples"] = self.config.samples
                result["temperature"] = self.config.answer_temperature
            result["turns"] = len(agent.turns)
            result["failed_turns"] = sum(1 for t in agent.turns if not t.ok)
        except Exception as exc:  # one pair failing must not end the run
            log.exception("replay pair %s failed", label)
            result["error"] = f"{type(exc).__name__}: {exc}"
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

    async def _experience(self, chains: ExperienceSet, name: str, repo: RepoIndex | None,
                          label: str, result: dict[str, Any]) -> None:
        """Experience tasks, then the related tasks under each setting; one ledger for the
        pair's answers and memory operations, the summaries' tokens apart."""
        llm = answer_llm(self.config.model, self.config.window)
        summary_llm = answer_llm(self.config.model, self.config.window)
        total = len(chains.experience) + len(chains.related) * len(self.config.experience_settings)
        ticks = iter(range(1, total + 1))
        original = self.outline_repo(chains)
        try:
            done = await run_experience_tasks(
                chains, lambda part: self._agent(chains, name, repo, llm=llm, part=part),
                summary_llm, original, self.config.limits)
            self._tick(label, len(chains.experience), total)
            settings = await run_settings(
                chains, self.config.experience_settings,
                lambda part: self._agent(chains, name, repo, llm=llm, part=part), done,
                original, self.config.limits,
                lambda: self._tick(label, len(chains.experience) + next(ticks), total))
            result["experience"] = {"settings": settings, "experience_tasks": done.graded,
                                    "summaries": done.summaries,
                                    "summary_tokens": summary_llm.ledger.tokens}
            result["sandbox"] = sandbox_mode()
        except Exception as exc:  # one pair failing must not end the run
            log.exception("replay pair %s failed", label)
            result["error"] = f"{type(exc).__name__}: {exc}"
        result["tokens"] = llm.ledger.tokens
        result["usage"] = llm.ledger.to_dict()

    def _judge(self) -> EmbedJudge | LLMJudge:
        if self.config.judge_model:
            return LLMJudge(LLM(LLMConfig(model=self.config.judge_model)), self.embed_judge)
        return self.embed_judge

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
        from replay.executors import make_executor

        if self.config.limit is not None:
            sources = sources[: self.config.limit]
        problems = [p for s in sources if isinstance(s, Recorded)
                    if (p := self.missing_repository(s)) is not None]
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
