"""A pytest plugin: each test's CPU seconds and wall seconds, every process it starts
counted (the sandbox's jailed processes, Ray's, the loopback model server's), which
``/usr/bin/time`` and getrusage miss; ``scripts/cpu_seconds.sh`` gives a whole command's.

Each pytest process (each xdist worker) moves itself into a cpuacct cgroup (v1) of its
own at start, so its children are counted with it; after each test one JSON line
``{"id", "cpu", "wall"}`` goes to ``$CPU_PER_TEST_OUT-<pid>.jsonl`` (default
``/tmp/cpu-per-test``). Needs root and /sys/fs/cgroup/cpuacct. Usage:

    PYTHONPATH=$PWD:$PWD/scripts pytest -n 2 -p cpu_per_test [pytest args]
    python scripts/cpu_per_test.py '/tmp/cpu-per-test-*.jsonl'   # totals, by module
"""

from __future__ import annotations

import collections
import glob
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

_CGROUP = ""
_OUT: Any = None


def _usage() -> float:
    with open(os.path.join(_CGROUP, "cpuacct.usage")) as handle:
        return int(handle.read()) / 1e9


def pytest_configure(config: pytest.Config) -> None:
    global _CGROUP, _OUT
    _CGROUP = f"/sys/fs/cgroup/cpuacct/engram-per-test-{os.getpid()}"
    os.makedirs(_CGROUP, exist_ok=True)
    with open(os.path.join(_CGROUP, "cgroup.procs"), "w") as handle:
        handle.write(str(os.getpid()))
    prefix = os.environ.get("CPU_PER_TEST_OUT", "/tmp/cpu-per-test")
    _OUT = open(f"{prefix}-{os.getpid()}.jsonl", "a")  # noqa: SIM115 - open for the session


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    cpu, wall = _usage(), time.monotonic()
    yield
    _OUT.write(json.dumps({"id": item.nodeid, "cpu": round(_usage() - cpu, 3),
                           "wall": round(time.monotonic() - wall, 3)}) + "\n")
    _OUT.flush()


def main(pattern: str, top: int = 30) -> None:
    rows = [json.loads(line) for path in glob.glob(pattern)
            for line in Path(path).read_text().splitlines() if line]
    print(f"{len(rows)} tests: {sum(r['cpu'] for r in rows):.0f} CPU s, "
          f"{sum(r['wall'] for r in rows):.0f} s in tests")
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for row in rows:
        entry = modules[row["id"].split("::")[0]]
        entry[0] += row["cpu"]
        entry[1] += row["wall"]
        entry[2] += 1
    print("   CPU s   wall s  tests  module")
    for name, (cpu, wall, count) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{cpu:8.1f} {wall:8.1f} {count:6d}  {name}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/cpu-per-test-*.jsonl")
