"""Per-run cost of the sandbox: the bubblewrap jail vs the weak guard (and no sandbox).

Each mode runs the same two things N times in a fresh ``Sandbox`` and reports the median
wall time in ms: ``python -c pass`` (the jail's own start-up), one pytest run of a
one-test file with its verdict (what replay does once per generated function) and one
asserts run of three asserts (what CodeIF-Bench grading does once per answer).

    .venv/bin/python scripts/bench_sandbox.py [N]
    .venv/bin/python scripts/bench_sandbox.py N --against REV

``--against REV`` times the harness of git revision REV (its replay/sandbox.py and the
files it copies) against the working tree's instead, interleaved run by run so that
both see the same load: a pytest run, one assert and three asserts, in the jail.
"""

from __future__ import annotations

import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replay.sandbox import sandbox
from replay.sandbox.sandbox import Sandbox

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


HARNESS = ("sandbox.py", "_bwrap.py", "_guard.py", "_verdict.py", "_runner.py", "_check.py",
           "_zygote.py")


def _load(name: str, rev: str | None, into: Path):
    """replay's harness files at ``rev`` (None: the working tree) as package ``name``."""
    root = Path(__file__).resolve().parent.parent
    package = into / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for file in HARNESS:
        if rev is None:
            path = root / "replay" / "sandbox" / file
            text = path.read_text() if path.exists() else None
        else:
            shown = subprocess.run(["git", "-C", str(root), "show", f"{rev}:replay/{file}"],
                                   capture_output=True, text=True)
            if shown.returncode != 0:  # since the harness moved to replay/sandbox/
                shown = subprocess.run(["git", "-C", str(root), "show",
                                        f"{rev}:replay/sandbox/{file}"],
                                       capture_output=True, text=True)
            text = shown.stdout if shown.returncode == 0 else None
        if text is not None:
            for old in ("from replay import _bwrap", "from replay.sandbox import _bwrap"):
                text = text.replace(old, "from . import _bwrap")
            (package / file).write_text(text)
    return importlib.import_module(f"{name}.sandbox")


def against(rev: str, n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        harnesses = {rev: _load("bench_old", rev, Path(tmp)),
                     "worktree": _load("bench_new", None, Path(tmp))}
        runs = {"pytest": lambda box: box.pytest("test_one.py").ok,
                "1 assert": lambda box: len(box.asserts(CODE, ASSERTS[:1]).passed) == 1,
                "3 asserts": lambda box: len(box.asserts(CODE, ASSERTS).passed) == 3}
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(n):
            for label, module in harnesses.items():
                if module.mode() != "bwrap":
                    raise SystemExit("the jail is not available here")
                for what, run in runs.items():
                    with module.Sandbox(files={"test_one.py": TEST}) as box:
                        started = time.perf_counter()
                        ok = run(box)
                        times.setdefault((label, what), []).append(
                            (time.perf_counter() - started) * 1000)
                    if not ok:
                        raise SystemExit(f"{label} {what} failed")
    print(f"median of {n} interleaved runs in the jail, ms "
          f"(load average {os.getloadavg()[0]:.1f})")
    for what in runs:
        old, new = (statistics.median(times[(label, what)]) for label in harnesses)
        print(f"  {what:9}  {rev} {old:6.0f}   worktree {new:6.0f}   {new - old:+6.0f}")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    if len(sys.argv) > 3 and sys.argv[2] == "--against":
        against(sys.argv[3], n)
        return
    print(f"median of {n} runs, ms (load average {os.getloadavg()[0]:.1f})")
    print(f"  python -c pass, no sandbox: {bare(n):7.0f}")
    for what in ("python", "pytest", "asserts"):
        weak, jail = timed("weak", what, n), timed("bwrap", what, n)
        print(f"  {what:7}  weak {weak:7.0f}   bwrap {jail:7.0f}   "
              f"bwrap - weak {jail - weak:+6.0f}")


if __name__ == "__main__":
    main()
