"""Shared by bench_index.py and bench_tui.py: the benchmark tree, whole-process timing,
the import-time profile, and the table."""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TOKENIZERS_PARALLELISM": "false"}


def build_tree(dest: Path) -> int:
    """The installed ``textual`` and ``rich`` sources as one git repository; its lines."""
    import rich
    import textual

    for package in (textual, rich):
        src = Path(package.__file__).parent
        shutil.copytree(src, dest / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    lines = sum(p.read_text("utf-8", "replace").count("\n") for p in dest.rglob("*.py"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), "commit", "-qm", "tree"], check=True, env=env)
    return lines


def engram() -> list[str]:
    """The installed ``engram`` command (as a user runs it), else the module."""
    script = Path(sys.executable).parent / "engram"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui.cli"]


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, **OFFLINE, "ENGRAM_HOME": str(home), **extra}


class Timed(float):
    """Seconds of wall time, with the CPU seconds (user + system, the process and its
    children) as ``cpu``: on a shared machine the wall time follows the load, the CPU
    time much less."""

    cpu: float | None = None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(argv: list[str], env: dict[str, str]) -> Timed:
    """Seconds from process start to exit (and its CPU seconds); a failure stops the
    benchmark."""
    cpu = _children_cpu()
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = Timed(time.perf_counter() - start)
    elapsed.cpu = _children_cpu() - cpu
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{result.stderr[-2000:]}")
    return elapsed


def first_output(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from process start to its first byte on stdout (time to first token)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    first = proc.stdout.read(1)
    elapsed = time.perf_counter() - start
    _, err = proc.communicate()
    if proc.returncode != 0 or not first:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err.decode()[-2000:]}")
    return elapsed


def repeat(runs: int, measure: Callable[[int], float]) -> list[float]:
    return [measure(i) for i in range(runs)]


def import_profile(argv: list[str], env: dict[str, str], top: int = 8) -> list[tuple[str, float]]:
    """Top-level packages by cumulative import time (``python -X importtime``), seconds."""
    result = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env,
                            capture_output=True, text=True)
    totals: dict[str, float] = defaultdict(float)
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        _, cumulative, name = line.split("|")
        if name.startswith("  "):  # nested: counted in its top-level import
            continue
        totals[name.strip().split(".")[0]] += int(cumulative) / 1e6
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def print_table(title: str, rows: list[tuple[str, list[float], str]]) -> None:
    """One line per measure: median, min-max of the runs, the median CPU seconds (whole
    processes timed by ``run_timed``), the target."""
    print(f"\n{title}")
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median':>8}  {'min':>7}  {'max':>7}  {'cpu':>7}  runs  target")
    for name, values, target in rows:
        cpus = [v.cpu for v in values if getattr(v, "cpu", None) is not None]
        cpu = f"{statistics.median(cpus):>6.2f}s" if cpus else f"{'-':>7}"
        print(f"{name:<{width}}  {statistics.median(values):>7.2f}s  {min(values):>6.2f}s  "
              f"{max(values):>6.2f}s  {cpu}  {len(values):>4}  {target}")


def print_profile(title: str, profile: list[tuple[str, float]]) -> None:
    print(f"\nimport time, {title} (top-level packages, cumulative):")
    print("  " + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in profile))


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"
