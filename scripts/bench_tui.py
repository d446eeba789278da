"""Benchmark the app in a real pseudo-terminal (pexpect), offline, as whole processes.

    .venv/bin/python scripts/bench_tui.py [--repo REPO] [--runs 5] [--quick]

On the ~120k-line benchmark tree of bench_index.py (or ``--repo``), index already built:

1. Time from process start to the first frame (the status bar painted), median of runs.
2. Time from process start until the status bar says the index is ready.
3. (not with ``--quick``) keystroke-to-echo latency while local/smollm2 streams an
   answer, and the time to switch to a non-LLM backend (full, rag) after 50 turns
   (turns loaded from a recorded session with ``-c``).
4. (not with ``--quick``) keystroke-to-echo latency during a 5-turn mem0 catch-up on
   local/smollm2 (``/backend mem0`` after ``-c``), and how long that catch-up took.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).parent))

from _bench import bench_env, build_tree, engram, load, print_table, repeat


def spawn(args: list[str], data: Path) -> pexpect.spawn:
    env = {**bench_env(data / "home", TERM="xterm-256color",
                       ENGRAM_CONFIG=str(data / "c.json"))}
    cmd = engram()
    return pexpect.spawn(cmd[0], [*cmd[1:], *args, "--data-dir", str(data)],
                         env=env, dimensions=(40, 120), timeout=300, encoding="utf-8",
                         codec_errors="replace")


def until(repo: Path, data: Path, text: str) -> float:
    """Seconds from process start until ``text`` is on the screen."""
    start = time.perf_counter()
    child = spawn([str(repo), "--model", "local/smollm2"], data)
    child.expect(text)
    elapsed = time.perf_counter() - start
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    return elapsed


def echo_latency(repo: Path, data: Path) -> list[float]:
    child = spawn([str(repo), "--model", "local/smollm2", "--max-tokens", "300"], data)
    child.expect("index ready")
    child.send("Explain how colors are parsed, in detail.\r")
    time.sleep(25)  # the model is loaded and streaming by now
    latencies = keys_echo(child)
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    return latencies


def keys_echo(child: pexpect.spawn, keys: int = 10) -> list[float]:
    """Milliseconds from sending a key to seeing it on the screen, per key."""
    latencies = []
    for i in range(keys):
        marker = f"zq{i}"
        child.send(marker[:-1])
        time.sleep(0.3)
        start = time.perf_counter()
        child.send(marker[-1])
        child.expect(marker)
        latencies.append((time.perf_counter() - start) * 1000)
        child.send("\x7f" * len(marker))
        time.sleep(0.3)
    return latencies


def catchup_echo(repo: Path, data: Path) -> tuple[list[float], float]:
    """Key echo while mem0 catches up on the 5 turns of the latest session, and the
    catch-up's duration."""
    child = spawn([str(repo), "-c", "--model", "local/smollm2"], data)
    child.expect("resumed 5 turns")
    child.expect("index ready")
    child.send("/backend mem0\r")
    start = time.perf_counter()
    child.expect("switching to mem0")
    latencies = keys_echo(child)
    child.expect("backend mem0, caught up on 5 turns", timeout=900)
    elapsed = time.perf_counter() - start
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    return latencies, elapsed


def record_session(repo: Path, data: Path, turns: int) -> None:
    from memory.home import repo_home
    from memory.transcript import TranscriptWriter
    from memory.types import Turn

    sessions = repo_home(repo.resolve(), data) / "sessions"
    with TranscriptWriter(sessions / f"bench-{turns}.jsonl") as writer:
        writer.write({"type": "session", "id": f"bench-{turns}", "repo": str(repo),
                      "model": "local/smollm2", "backend": "empty"})
        for i in range(turns):
            writer.write(Turn(i, f"In {i} places we parse colors: keep parse_rgb_hex strict, "
                                 f"never accept {i + 3}-digit hex codes.",
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
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, default=None,
                        help="default: a copy of the installed textual + rich sources")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="only first frame and index readiness")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        repo = args.repo
        if repo is None:
            repo = data / "tree"
            print(f"tree: {build_tree(repo)} lines of Python")
        # the index exists already, as on any start but the first
        subprocess.run([*engram(), "index", "--repo", str(repo), "--data-dir", str(data)],
                       env=bench_env(data / "home"), check=True, capture_output=True)
        rows = [
            ("app first frame (status bar painted)",
             repeat(args.runs, lambda i: until(repo, data, "backend full")), "<= 0.5 s"),
            ("app start until index ready (built before)",
             repeat(args.runs, lambda i: until(repo, data, "index ready")), "-"),
        ]
        print_table(f"the app, whole processes, median of {args.runs} ({load()})", rows)
        if args.quick:
            return
        lat = echo_latency(repo, data)
        print(f"keystroke echo while streaming: median {statistics.median(lat):.0f} ms, "
              f"max {max(lat):.0f} ms over {len(lat)} keys")
        record_session(repo, data, 50)
        for backend in ("full", "rag"):
            print(f"switch to {backend} after 50 turns: {switch_time(repo, data, backend):.2f}s")
        record_session(repo, data, 5)  # the newest: what -c resumes
        lat, took = catchup_echo(repo, data)
        print(f"keystroke echo during a 5-turn mem0 catch-up on local/smollm2: median "
              f"{statistics.median(lat):.0f} ms, max {max(lat):.0f} ms over {len(lat)} keys "
              f"(the catch-up took {took:.0f} s)")


if __name__ == "__main__":
    main()
