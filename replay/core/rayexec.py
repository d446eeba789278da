"""The Ray executor: each (source, backend) pair a Ray task (``--executor ray``).

An outline is prepared once (stubbed copy + its index) by one task; the prepared
folder travels as a tar archive through Ray's object store to the tasks of its pairs,
which unpack it into their worker's temp folder (once per worker) — LanceDB stores
stay per worker, under a scratch folder of the run that the driver removes at the end
(on its own node; a remote node's stays in its temp dir). A worker writes its pair's
transcript to its own temp folder and hands it back with the result; the driver
publishes both to the output location, so workers need no access to it. ``--rpm`` is
held by one limiter actor every worker asks before each LLM call. Ray is imported only
here, only when this executor runs.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import tarfile
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.core.cost import Budget
from replay.core.executors import ExecutorError, Pair, drive
from replay.core.ratelimit import RateLimiter, RateLimits
from replay.core.sources import needs_preparation, source_id, source_kind

if TYPE_CHECKING:
    from replay.core.runner import Replay, ReplayConfig
    from replay.core.sources import Source

Setup = Callable[[], None] | None
_WORKER: dict[str, Any] = {}  # per worker process: its Replay for a config


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError("--executor ray needs Ray: pip install 'engram[ray]'") from exc
    return ray


def scratch_root(run: str) -> Path:
    """Where a run's workers keep their temp folders on a node (one per worker process):
    the driver removes it on its own node when the run ends."""
    return Path(tempfile.gettempdir()) / f"engram-ray-{run}"


def _worker_replay(config: ReplayConfig, setup: Setup, run: str,
                   cls: type[Replay]) -> Replay:
    """This worker's replay of ``run`` (``cls``: the driver's class, pickled by reference,
    so this module never imports the runner that imports it)."""
    if setup is not None:
        setup()
    if config.settings is not None:  # the driver's settings, not this node's environment
        from memory.settings import install

        install(config.settings)
    key = f"{run}:{config!r}"
    if key not in _WORKER:
        scratch = scratch_root(run) / str(os.getpid())
        scratch.mkdir(parents=True, exist_ok=True)
        _WORKER[key] = cls(config, transcripts=scratch / "conversations", scratch=scratch)
    return _WORKER[key]


def prepare_source(config: ReplayConfig, source: Source, setup: Setup, run: str,
                   cls: type[Replay]) -> bytes:
    """Ray task: an outline's prepared folder as a gzipped tar."""
    replay = _worker_replay(config, setup, run, cls)
    replay.prepare(source)  # type: ignore[arg-type]
    key = source_id(source)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(replay.work / key, arcname=key)
    return buffer.getvalue()


class LimiterActor:
    """One ``RateLimiter`` for the whole cluster (a Ray actor)."""

    def __init__(self, limits: RateLimits) -> None:
        self.limiter = RateLimiter(limits)

    def reserve(self, model: str) -> float:
        return self.limiter.reserve(model)


def actor_gate(actor: Any) -> Callable[[str], Any]:
    """``memory.llm.client``'s rate gate in a worker: wait for the actor's slot."""
    ray = _ray()

    async def gate(model: str) -> None:
        delay = await asyncio.to_thread(ray.get, actor.reserve.remote(model))
        if delay > 0:
            await asyncio.sleep(delay)

    return gate


def run_pair_task(config: ReplayConfig, source: Source, name: str, archive: bytes | None,
                  limiter: Any, setup: Setup, run: str, cls: type[Replay]) -> dict[str, Any]:
    """Ray task: one pair; its result row and its transcripts' bytes by file name."""
    from memory.llm.client import set_rate_gate

    replay = _worker_replay(config, setup, run, cls)
    key = source_id(source)
    if archive is not None and key not in replay._prepared:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            tar.extractall(replay.work, filter="data")
        replay.adopt(key)
    set_rate_gate(actor_gate(limiter) if limiter is not None else None)
    try:
        row = asyncio.run(replay.run_pair(source, name))
    finally:
        set_rate_gate(None)
    files = {}
    for path in replay.transcript_files(row):
        files[path.name] = path.read_bytes()
        path.unlink()
    return {"row": row, "transcripts": files}


@dataclass
class RayExecutor:
    """Pairs as Ray tasks on a local instance (started here, stopped after) or on the
    cluster at ``address``. ``cpus_per_task``: Ray's CPU request of each pair task."""

    address: str | None = None
    cpus_per_task: float = 1.0
    worker_setup: Setup = None  # run in each worker before its task (tests: a fake model)

    async def run(self, replay: Replay, todo: list[Pair], budget: Budget) -> None:
        ray = _ray()
        run = uuid.uuid4().hex[:12]  # names this run's scratch folders on every node
        started = not ray.is_initialized()
        if started:
            try:
                ray.init(address=self.address, include_dashboard=False,
                         logging_level="warning")
            except Exception as exc:
                raise ExecutorError(f"cannot start or reach Ray ({self.address or 'local'}): "
                                    f"{exc}") from exc
        try:
            prepare = ray.remote(prepare_source).options(num_cpus=self.cpus_per_task)
            pair = ray.remote(run_pair_task).options(num_cpus=self.cpus_per_task,
                                                     max_retries=0)
            limits = replay.config.rate_limits
            limiter = (ray.remote(LimiterActor).options(num_cpus=0).remote(limits)
                       if limits else None)
            archives: dict[str, Any] = {}

            async def launch(source: Source, name: str) -> dict[str, Any]:
                key = source_id(source)
                if needs_preparation(source) and key not in archives:
                    archives[key] = prepare.remote(replay.config, source, self.worker_setup,
                                                   run, type(replay))
                ref = pair.remote(replay.config, source, name, archives.get(key), limiter,
                                  self.worker_setup, run, type(replay))
                try:
                    out = await asyncio.to_thread(ray.get, ref)
                except Exception as exc:  # the worker died, or preparing failed
                    out = {"row": {"source": key, "kind": source_kind(source),
                                   "backend": name, "error": f"ray: {type(exc).__name__}: "
                                   f"{str(exc)[:500]}"}, "transcripts": {}}
                replay.publish(out["row"], out["transcripts"])
                replay._tick(f"{key} · {name}", 1, 1)
                return dict(out["row"])

            await drive(replay, todo, budget, launch, replay.config.concurrency)
        finally:
            if started:
                ray.shutdown()
            shutil.rmtree(scratch_root(run), ignore_errors=True)
