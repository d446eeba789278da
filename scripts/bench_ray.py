"""Wall time of the demo benchmark: the local executor vs Ray, the scripted model.

    .venv/bin/python scripts/bench_ray.py [--outlines 16] [--backends all] [--workers 2]

Both executors run the same pairs (demo outlines x backends, template mock user, the
context-reading scripted model of tests/replay/reader.py, which answers at once: the
time is engram's own work: indexing, backends, embeddings, sandboxed tests) with
``--concurrency`` = workers. Ray runs on a local instance of ``--workers`` CPUs started
here. Printed: wall time of each, seconds per pair, Ray's start-up, the round trip of an
empty Ray task, and Ray's overhead per pair task = (workers x wall - sum of the pairs'
own seconds) / pairs, next to the same figure for the local executor. Times by
``time.perf_counter`` in this process; no external tool.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.backends import registry
from memory.index.embed import get_embedder
from replay.core.rayexec import RayExecutor
from replay.core.runner import Replay, ReplayConfig
from replay.locoeval import DEMO
from replay.locoeval.outline import load_outlines
from tests.replay.workers import reader_model


def run(out: Path, backends: list[str], outlines: list, workers: int,
        executor: object) -> tuple[float, list[dict]]:
    config = ReplayConfig(backends=backends, model="scripted/bench", out=out,
                          repo=DEMO / "inventory", max_tokens=128, concurrency=workers)
    replay = Replay(config, embedder=get_embedder())
    start = time.perf_counter()
    try:
        pairs = asyncio.run(replay.run(outlines, executor))
    finally:
        replay.close()
    return time.perf_counter() - start, pairs


def overhead(wall: float, pairs: list[dict], workers: int) -> float:
    return (workers * wall - sum(float(p.get("seconds") or 0) for p in pairs)) / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outlines", type=int, default=16)
    parser.add_argument("--backends", default="all")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    backends = ([*registry.names(), "oracle"] if args.backends == "all"
                else args.backends.split(","))
    outlines = load_outlines(DEMO / "outlines")[: args.outlines]
    reader_model()
    import ray

    with tempfile.TemporaryDirectory() as tmp:
        local_wall, local = run(Path(tmp) / "local", backends, outlines, args.workers, None)
        start = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, logging_level="warning")
        startup = time.perf_counter() - start

        @ray.remote(num_cpus=1)
        def nothing() -> None:
            return None

        ray.get([nothing.remote() for _ in range(args.workers)])  # workers up
        trips = []
        for _ in range(20):
            t = time.perf_counter()
            ray.get(nothing.remote())
            trips.append(time.perf_counter() - t)
        ray_wall, remote = run(Path(tmp) / "ray", backends, outlines, args.workers,
                               RayExecutor(worker_setup=reader_model))
        ray.shutdown()
    n = len(local)
    same = ({(p["source"], p["backend"]): p.get("scores") for p in local}
            == {(p["source"], p["backend"]): p.get("scores") for p in remote})
    figures = {
        "pairs": n, "outlines": len(outlines), "backends": len(backends),
        "workers": args.workers,
        "local_wall_s": round(local_wall, 1), "ray_wall_s": round(ray_wall, 1),
        "local_s_per_pair": round(local_wall / n, 2), "ray_s_per_pair": round(ray_wall / n, 2),
        "ray_startup_s": round(startup, 1),
        "ray_empty_task_ms": round(1000 * statistics.median(trips), 1),
        "local_overhead_s_per_pair": round(overhead(local_wall, local, args.workers), 2),
        "ray_overhead_s_per_pair": round(overhead(ray_wall, remote, args.workers), 2),
        "pair_seconds_local_mean": round(statistics.fmean(p["seconds"] for p in local), 2),
        "pair_seconds_ray_mean": round(statistics.fmean(p["seconds"] for p in remote), 2),
        "errors": sum(1 for p in local + remote if p.get("error")),
        "same_scores": same,
    }
    for key, value in figures.items():
        print(f"{key:28} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
