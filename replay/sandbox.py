"""Run generated code and its tests away from the user's tree.

Each run gets a fresh temp dir (the work copy, HOME and TMPDIR all inside it), a
wall-clock timeout that kills the whole process group, rlimits on memory, CPU time
and file size, a network namespace when the OS lets an unprivileged user make one
(``unshare -rn``), and an audit hook (``_guard.py`` as ``sitecustomize``) that
refuses writes outside the temp dir, processes and sockets. Defaults follow
DevEval's harness: 60 s per test run, a 5 GB memory cap.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

GUARD = Path(__file__).with_name("_guard.py")
IGNORED = shutil.ignore_patterns(".git", ".venv", "venv", "node_modules", "__pycache__",
                                 ".pytest_cache", "*.pyc")
OUTPUT_LIMIT = 20_000  # characters of stdout/stderr kept per run


class SandboxError(ValueError):
    """A request the sandbox refuses (a file path escaping the work dir)."""


@dataclass(frozen=True)
class Limits:
    timeout: float = 60.0  # wall clock, seconds
    memory_bytes: int = 5 * 1024**3  # address space
    file_bytes: int = 64 * 1024**2  # largest file the code may write


@dataclass(frozen=True)
class RunResult:
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@lru_cache(maxsize=1)
def network_namespace() -> bool:
    """Whether ``unshare -rn`` works here (user namespaces may be disabled)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        return subprocess.run([unshare, "-rn", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _limit(limits: Limits) -> None:  # runs in the child before exec
    cpu = int(limits.timeout) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _inside(root: Path, rel: str) -> Path:
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()):
        raise SandboxError(f"{rel!r} leads outside the sandbox")
    return path


class Sandbox:
    """One temp dir: ``work`` (a copy of a tree, plus written files), ``home``, ``tmp``."""

    def __init__(self, copy_from: Path | None = None, files: dict[str, str] | None = None,
                 limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._dir = tempfile.TemporaryDirectory(prefix="engram-sandbox-")
        self.root = Path(self._dir.name).resolve()
        self.work = self.root / "work"
        if copy_from is not None:
            shutil.copytree(copy_from, self.work, ignore=IGNORED, symlinks=True)
        else:
            self.work.mkdir()
        for sub in ("home", "tmp", "guard"):
            (self.root / sub).mkdir()
        shutil.copyfile(GUARD, self.root / "guard" / "sitecustomize.py")
        for rel, text in (files or {}).items():
            self.write(rel, text)

    def write(self, rel: str, text: str) -> Path:
        path = _inside(self.work, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def read(self, rel: str) -> str:
        return _inside(self.work, rel).read_text()

    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(self.root / "home"),
            "TMPDIR": str(self.root / "tmp"),
            "PYTHONPATH": f"{self.root / 'guard'}:{self.work}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "ENGRAM_SANDBOX_ROOT": str(self.root),
            "LANG": "C.UTF-8",
            # engram's own pytest plugins (textual snapshots, asyncio, ...) are not the code
            # under test's; loading them tripled every run's start-up (1.25 s -> 0.43 s).
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }

    def run(self, argv: list[str]) -> RunResult:
        """Run ``argv`` in the work dir under the limits; never raises for the code's faults."""
        command = ["unshare", "-rn", *argv] if network_namespace() else argv
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=self.work, env=self.env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: _limit(self.limits),
                                start_new_session=True)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=self.limits.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        return RunResult(proc.returncode, timed_out,
                         out.decode("utf-8", "replace")[-OUTPUT_LIMIT:],
                         err.decode("utf-8", "replace")[-OUTPUT_LIMIT:],
                         time.monotonic() - started)

    def python(self, rel: str) -> RunResult:
        """Run one script of the work dir (CodeIF-Bench's harness: code + asserts)."""
        return self.run([sys.executable, str(_inside(self.work, rel))])

    def pytest(self, *targets: str) -> RunResult:
        """Run pytest node ids (``tests/test_x.py::test_y``) of the work dir in one process,
        stopping at the first failure: ``ok`` means every one passed."""
        if not targets:
            raise ValueError("no tests to run")
        return self.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                         *targets])

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
