"""The Ray executor against the local one (the reference): same scores and files, resume
across executors after a killed driver, one rate limit held by every worker."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import ray

from replay.core.ratelimit import RateLimiter, RateLimits
from replay.core.rayexec import LimiterActor, RayExecutor, actor_gate
from replay.core.runner import Replay, ReplayConfig
from replay.locoeval import DEMO
from replay.locoeval.outline import load_outlines
from tests.replay.workers import demo_model, demo_reply, stamping_model

OUTLINES = load_outlines(DEMO / "outlines")[:1]
BACKENDS = ["full", "empty", "rag", "oracle"]


@pytest.fixture(scope="module")
def ray_instance():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    yield
    ray.shutdown()


def run(out: Path, backends: list[str], executor: Any, embedder: Any, outlines=OUTLINES,
        **kw: Any) -> list[dict[str, Any]]:
    config = ReplayConfig(backends=backends, model="scripted/t", out=out, seed=3,
                          repo=DEMO / "inventory", max_tokens=128, concurrency=2, **kw)
    replay = Replay(config, embedder=embedder)
    try:
        return asyncio.run(replay.run(outlines, executor))
    finally:
        replay.close()


def ray_executor() -> RayExecutor:
    return RayExecutor(worker_setup=demo_model)


def by_pair(pairs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(p["source"], p["backend"]): p for p in pairs}


def said(path: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["user"], r["assistant"]) for r in rows if r.get("type") == "turn"]


def test_ray_gives_the_local_executors_scores_and_files(tmp_path, script, embedder,
                                                        ray_instance):
    script.default, script.count_prompt = demo_reply, True
    scratch = set(Path(tempfile.gettempdir()).glob("engram-ray-*"))
    local = by_pair(run(tmp_path / "local", BACKENDS, None, embedder, outlines=OUTLINES))
    remote = by_pair(run(tmp_path / "ray", BACKENDS, ray_executor(), embedder,
                         outlines=OUTLINES))
    assert set(local) == set(remote) and len(local) == 4
    for key, row in local.items():
        other = remote[key]
        assert row["error"] is None and other["error"] is None, key
        for field in ("scores", "turns", "usage", "cost", "judge_check", "subset", "k"):
            assert row[field] == other[field], (key, field)
    names = sorted(p.name for p in (tmp_path / "local" / "conversations").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "ray" / "conversations").iterdir())
    for name in names:
        assert said(tmp_path / "local" / "conversations" / name) == \
            said(tmp_path / "ray" / "conversations" / name), name
    assert len((tmp_path / "ray" / "pairs.jsonl").read_text().splitlines()) == 4
    assert set(Path(tempfile.gettempdir()).glob("engram-ray-*")) <= scratch  # removed


def kill(out: Path, keep: int) -> None:
    """A driver killed mid-run: the first ``keep`` lines of pairs.jsonl, then a torn one."""
    lines = (out / "pairs.jsonl").read_text().splitlines()
    (out / "pairs.jsonl").write_text("\n".join(lines[:keep]) + "\n" + lines[keep][:40])


def test_a_killed_run_resumes_with_the_other_executor(tmp_path, script, embedder,
                                                      ray_instance):
    script.default, script.count_prompt = demo_reply, True
    out, one = tmp_path / "run", OUTLINES
    run(out, ["full", "empty"], None, embedder, outlines=one)
    per_pair = len(script.calls) // 2
    kill(out, keep=1)
    kept = json.loads((out / "pairs.jsonl").read_text().splitlines()[0])
    pairs = run(out, ["full", "empty", "rag"], ray_executor(), embedder, outlines=one,
                resume=True)
    assert {p["backend"] for p in pairs} == {"full", "empty", "rag"}
    lines = (out / "pairs.jsonl").read_text().splitlines()
    ran = [json.loads(line)["backend"] for line in lines[2:]]  # after the kept and torn lines
    assert sorted(ran) == sorted({"full", "empty", "rag"} - {kept["backend"]})
    kill(out, keep=len(lines) - 1)  # the Ray driver killed as well: its last pair is lost
    before = len(script.calls)
    pairs = run(out, ["full", "empty", "rag"], None, embedder, outlines=one, resume=True)
    assert all(p["error"] is None for p in pairs) and len(pairs) == 3
    assert len(script.calls) - before == per_pair  # the local executor ran that one pair only
    assert len(list((out / "conversations").iterdir())) == 3


def window_counts(times: list[float], window: float) -> int:
    """The most calls that started within any ``window`` seconds."""
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t < start + window)
               for i, start in enumerate(times))


@ray.remote(num_cpus=0.5)
def calls(limiter: Any, stamps: Path, n: int) -> int:
    from memory.llm.client import LLM, LLMConfig, set_rate_gate

    async def go(count: int) -> None:
        llm = LLM(LLMConfig(model="scripted/provider"))
        for _ in range(count):
            await llm.complete([{"role": "user", "content": "hi"}])

    stamping_model(stamps.with_name("warm-up"))
    asyncio.run(go(1))  # litellm's first call in a fresh worker is slow: not measured
    stamping_model(stamps)
    if limiter is not None:
        set_rate_gate(actor_gate(limiter))
    try:
        asyncio.run(go(n))
    finally:
        set_rate_gate(None)
    return n


@pytest.mark.parametrize("limited", [True, False])
def test_the_limiter_holds_a_providers_limit_under_four_workers(tmp_path, ray_instance,
                                                                limited):
    limit, window = 2, 1.5  # the provider's: 2 calls per 1.5 s
    limits = RateLimits(default=limit, window=window)
    limiter = ray.remote(LimiterActor).options(num_cpus=0).remote(limits) if limited else None
    stamps = tmp_path / "stamps"
    assert sum(ray.get([calls.remote(limiter, stamps, 2) for _ in range(4)])) == 8
    times = [float(t) for t in stamps.read_text().split()]
    assert len(times) == 8
    # the provider sees a call a little after the limiter let it go (the hop from the actor,
    # litellm's own work, a busy CPU): up to 0.4 s of that is allowed for
    busiest = window_counts(times, window - 0.4)
    if limited:
        assert busiest <= limit
        assert max(times) - min(times) >= 3 * window - 0.4  # 8 calls need 4 windows
    else:  # the same four workers without it: the provider's limit is passed
        assert busiest > limit


def test_rate_limiter_reserves_slots_a_window_apart():
    limiter = RateLimiter(RateLimits({"m": 2}, window=10.0))
    assert [limiter.reserve("m", now=0.0) for _ in range(5)] == [0, 0, 10, 10, 20]
    assert limiter.reserve("m", now=35.0) == 0.0  # the window has passed
    assert limiter.reserve("other", now=0.0) == 0.0  # no limit for that model



def test_a_pair_of_several_conversations_lands_whole_from_ray(tmp_path, script, embedder,
                                                              ray_instance):
    from replay.swecontext.experience import load_experience
    from tests.replay.workers import experience_model

    chains = [load_experience(DEMO / "experience" / "inventory-chains.json")]
    experience_model()  # this process's scripted model, for the local run
    settings = ("none", "oracle-summary")
    options = {"swecontext": {"settings": list(settings)}}
    local = run(tmp_path / "local", ["rag"], None, embedder, outlines=chains,
                benchmark_options=options)
    remote = run(tmp_path / "ray", ["rag"], RayExecutor(worker_setup=experience_model),
                 embedder, outlines=chains, benchmark_options=options)
    assert local[0]["error"] is None and remote[0]["error"] is None
    def timeless(value):  # all but wall times
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if "seconds" not in k}
        return value

    def scores(row):
        return timeless(row["experience"]["settings"])

    assert scores(local[0]) == scores(remote[0])
    assert scores(local[0])["oracle-summary"]["resolved"] == 1.0
    names = sorted(p.name for p in (tmp_path / "local" / "conversations").iterdir())
    assert len(names) > 1  # one transcript per task conversation
    assert names == sorted(p.name for p in (tmp_path / "ray" / "conversations").iterdir())
