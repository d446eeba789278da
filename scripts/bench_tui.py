"""Benchmark the app in a real pseudo-terminal (pexpect), offline.

    .venv/bin/python scripts/bench_tui.py [REPO]

1. Time from process start to the first frame (the status bar painted).
2. Keystroke-to-echo latency while local/smollm2 streams an answer.
3. Time to switch to a non-LLM backend (full, rag) after 50 turns
   (turns loaded from a recorded session with `-c`).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def spawn(args: list[str], data: Path) -> pexpect.spawn:
    env = {**os.environ, "TERM": "xterm-256color", "HF_HUB_OFFLINE": "1",
           "ENGRAM_CONFIG": str(data / "c.json")}
    return pexpect.spawn(sys.executable, ["-m", "tui.cli", *args, "--data-dir", str(data)],
                         env=env, dimensions=(40, 120), timeout=300, encoding="utf-8",
                         codec_errors="replace")


def first_frame(repo: Path, data: Path) -> float:
    start = time.perf_counter()
    child = spawn([str(repo), "--model", "local/smollm2"], data)
    child.expect("backend full")
    elapsed = time.perf_counter() - start
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    return elapsed


def echo_latency(repo: Path, data: Path) -> list[float]:
    child = spawn([str(repo), "--model", "local/smollm2", "--max-tokens", "300"], data)
    child.expect("local/smollm2")
    time.sleep(20)  # boot and index
    child.send("Explain migrate and connect in detail.\r")
    time.sleep(25)  # the model is loaded and streaming by now
    latencies = []
    for i in range(10):
        marker = f"zq{i}"
        child.send(marker[:-1])
        time.sleep(0.3)
        start = time.perf_counter()
        child.send(marker[-1])
        child.expect(marker)
        latencies.append((time.perf_counter() - start) * 1000)
        child.send("\x7f" * len(marker))
        time.sleep(0.3)
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    return latencies


def record_session(repo: Path, data: Path, turns: int) -> None:
    from memory.home import repo_home
    from memory.transcript import TranscriptWriter
    from memory.types import Turn

    sessions = repo_home(repo.resolve(), data) / "sessions"
    with TranscriptWriter(sessions / "bench-50.jsonl") as writer:
        writer.write({"type": "session", "id": "bench-50", "repo": str(repo),
                      "model": "local/smollm2", "backend": "empty"})
        for i in range(turns):
            writer.write(Turn(i, f"question {i} about migrations and forms",
                              f"answer {i}: " + "words " * 60).to_record())


def switch_time(repo: Path, data: Path, backend: str) -> float:
    child = spawn([str(repo), "-c", "--model", "local/smollm2"], data)
    child.expect("resumed 50 turns")
    child.expect("index ready")
    child.send(f"/backend {backend}\r")
    start = time.perf_counter()
    child.expect(f"backend {backend}, caught up on 50 turns")
    elapsed = time.perf_counter() - start
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    return elapsed


def main() -> None:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        only_switch = os.environ.get("BENCH_ONLY_SWITCH")
        frames = [first_frame(repo, data) for _ in range(1 if only_switch else 3)]
        print(f"first frame: {', '.join(f'{f:.2f}s' for f in frames)} "
              f"(median {statistics.median(frames):.2f}s)")
        if not only_switch:
            lat = echo_latency(repo, data)
            print(f"keystroke echo while streaming: median {statistics.median(lat):.0f} ms, "
                  f"max {max(lat):.0f} ms over {len(lat)} keys")
        record_session(repo, data, 50)
        for backend in ("full", "rag"):
            print(f"switch to {backend} after 50 turns: {switch_time(repo, data, backend):.2f}s")


if __name__ == "__main__":
    main()
