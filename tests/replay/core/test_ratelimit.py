"""--rpm on the local executor: every LLM call of the run waits for the model's limiter."""

from __future__ import annotations

import time

import pytest

from replay.core.ratelimit import RateLimits, parse_rpm
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from tests.replay.conftest import perfect_reply


def test_parse_rpm():
    limits = parse_rpm(["60", "openai/gpt-4o-mini=500"])
    assert limits.limit("openai/gpt-4o-mini") == 500 and limits.limit("other") == 60
    assert limits.window == 60.0 and not parse_rpm([])
    for bad in ("fast", "m=0", "m=x"):
        with pytest.raises(ValueError, match="--rpm"):
            parse_rpm([bad])


def test_cli_refuses_a_bad_rpm(tmp_path, outline_file, capsys):
    from tui.cli import main

    assert main(["replay", str(outline_file), "--model", "scripted/t", "--rpm", "lots",
                 "--out", str(tmp_path / "run")]) == 2
    assert "expected N or MODEL=N" in capsys.readouterr().err.replace("\n", "")


async def test_local_executor_holds_the_limit(tmp_path, outline_file, script, embedder,
                                             monkeypatch):
    from replay.core.ratelimit import RateLimiter

    stamps: list[float] = []
    starts: list[float] = []
    reserve = RateLimiter.reserve

    def stamped_reserve(self, model: str, now: float | None = None) -> float:
        now = time.time() if now is None else now
        delay = reserve(self, model, now)
        starts.append(now + delay)
        return delay

    monkeypatch.setattr(RateLimiter, "reserve", stamped_reserve)

    def stamped(messages):
        stamps.append(time.monotonic())
        return perfect_reply(messages)

    script.default = stamped
    limit, window = 3, 2.0
    config = ReplayConfig(backends=["empty"], model="scripted/t", out=tmp_path / "run",
                          max_tokens=128, concurrency=2,
                          rate_limits=RateLimits(default=limit, window=window))
    replay = Replay(config, embedder=embedder)
    try:
        pairs = await replay.run(load_source(outline_file))
    finally:
        replay.close()
    assert all(p["error"] is None for p in pairs) and len(stamps) == 12  # 7 turns + 5 tasks
    # every provider call went through the gate, and the gate gave at most `limit` starts in
    # any window (counted on the starts it reserved: when the provider then sees a call depends
    # on the machine's load, which may bunch calls released apart)
    assert len(starts) == 12
    starts.sort()
    busiest = max(sum(1 for t in starts[i:] if t < start + window - 1e-6)
                  for i, start in enumerate(starts))
    assert busiest <= limit
    assert stamps[-1] - stamps[0] >= (12 / limit - 1) * window - 0.5
    from memory.llm import client as llm

    assert llm._rate_gate is None  # removed after the run
