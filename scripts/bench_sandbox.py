"""Per-run cost of the sandbox: the bubblewrap jail vs the weak guard (and no sandbox).

Each mode runs the same two things N times in a fresh ``Sandbox`` and reports the median
wall time in ms: ``python -c pass`` (the jail's own start-up), one pytest run of a
one-test file with its verdict (what replay does once per generated function) and one
asserts run of three asserts (what CodeIF-Bench grading does once per answer).

    .venv/bin/python scripts/bench_sandbox.py [N]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from replay import sandbox
from replay.sandbox import Sandbox

TEST = "def test_one():\n    assert 1 + 1 == 2\n"
CODE = "def double(x):\n    return x * 2\n"
ASSERTS = ["assert double(1) == 2", "assert double(0) == 0", "assert double(-2) == -4"]


def timed(mode: str, what: str, n: int) -> float:
    if mode == "weak":
        os.environ["ENGRAM_SANDBOX"] = "weak"
    else:
        os.environ.pop("ENGRAM_SANDBOX", None)
    sandbox.mode.cache_clear()
    if mode != sandbox.mode():
        raise SystemExit(f"{mode} is not available here (got {sandbox.mode()})")
    samples = []
    for _ in range(n):
        with Sandbox(files={"test_one.py": TEST}) as box:
            started = time.perf_counter()
            if what == "python":
                result = box.run([sys.executable, "-c", "pass"])
            elif what == "pytest":
                result = box.pytest("test_one.py")
            else:
                result = box.asserts(CODE, ASSERTS)
            samples.append((time.perf_counter() - started) * 1000)
            if not (result.ok if what != "asserts" else len(result.passed) == 3):
                raise SystemExit(f"{mode} {what} failed: {result.stderr[-400:]}")
    return statistics.median(samples)


def bare(n: int) -> float:
    """``python -c pass`` with no sandbox at all."""
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print(f"median of {n} runs, ms (load average {os.getloadavg()[0]:.1f})")
    print(f"  python -c pass, no sandbox: {bare(n):7.0f}")
    for what in ("python", "pytest", "asserts"):
        weak, jail = timed("weak", what, n), timed("bwrap", what, n)
        print(f"  {what:7}  weak {weak:7.0f}   bwrap {jail:7.0f}   "
              f"bwrap - weak {jail - weak:+6.0f}")


if __name__ == "__main__":
    main()
