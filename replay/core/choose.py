"""The executor a run's config names: ``local`` (this process) or ``ray`` (a cluster)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from replay.core.executors import Executor, ExecutorError, LocalExecutor

if TYPE_CHECKING:
    from replay.core.runner import ReplayConfig


def make_executor(config: ReplayConfig) -> Executor:
    if config.executor == "local":
        return LocalExecutor()
    if config.executor == "ray":
        from replay.core.rayexec import RayExecutor

        return RayExecutor(address=config.ray_address, cpus_per_task=config.ray_cpus_per_task)
    raise ExecutorError(f"unknown executor {config.executor!r}; known: local, ray")
