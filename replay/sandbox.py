"""Run generated code and its tests away from the user's tree.

Each run gets a fresh temp dir (the work copy, HOME and TMPDIR all inside it), a
wall-clock timeout, rlimits on memory, CPU time and file size, and runs inside the OS
jail of ``_bwrap.py`` (bubblewrap: user, pid, mount and network namespaces, uid 65534
inside, the temp dir the only writable tree, a process limit, everything killed with
the pid namespace). Where the kernel refuses namespaces, engram says so once and falls
back to the weak sandbox: the process group is killed at the timeout, a network
namespace when ``unshare -rn`` works, and the audit hook of ``_guard.py`` (installed as
``sitecustomize`` in both modes) refusing writes outside the temp dir, processes and
sockets from Python. ``RunResult.sandbox`` says which one ran ("bwrap" or "weak").

Verdicts never come from the tested code's output: ``pytest`` and ``asserts`` read them
from a pipe the harness opens, each line carrying a nonce the harness side of the run
(``_verdict.py``) consumed before the tested code started. Defaults follow DevEval's
harness: 60 s per test run, a 5 GB memory cap.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from replay import _bwrap

GUARD = Path(__file__).with_name("_guard.py")
VERDICT = Path(__file__).with_name("_verdict.py")
IGNORED = shutil.ignore_patterns(".git", ".venv", "venv", "node_modules", "__pycache__",
                                 ".pytest_cache", "*.pyc")
OUTPUT_LIMIT = 20_000  # characters of stdout/stderr kept per run


class SandboxError(ValueError):
    """A request the sandbox refuses (a file path escaping the work dir)."""


@dataclass(frozen=True)
class Limits:
    timeout: float = 60.0  # wall clock, seconds
    memory_bytes: int = 5 * 1024**3  # address space, per process
    file_bytes: int = 64 * 1024**2  # largest file the code may write
    processes: int = 64  # tasks (processes and threads) inside the jail


@dataclass(frozen=True)
class RunResult:
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float
    sandbox: str = "weak"  # "bwrap" (the OS jail) or "weak" (the audit hook only)
    passed: frozenset[str] = frozenset()  # ids the harness reported passed (nonce-checked)
    failed: frozenset[str] = frozenset()  # ids the harness reported failed
    expected: tuple[str, ...] | None = None  # the ids a verdict run must see pass

    @property
    def ok(self) -> bool:
        """Exit 0 in time and, for a verdict run, every expected id reported passed by the
        harness (a node id, a file or a class matches the tests under it), none failed."""
        if self.returncode != 0 or self.timed_out:
            return False
        if self.expected is None:
            return True
        return not self.failed and bool(self.passed) and all(
            any(_covers(target, node) for node in self.passed) for target in self.expected)


def _covers(target: str, node: str) -> bool:
    target = target.rstrip("/")
    return node == target or node.startswith((target + "::", target + "[", target + "/"))


@lru_cache(maxsize=1)
def mode() -> str:
    """"bwrap" when the OS jail works here, else "weak" (said once, on stderr); the
    environment variable ``ENGRAM_SANDBOX=weak`` asks for the weak one."""
    why = ("ENGRAM_SANDBOX=weak" if os.environ.get("ENGRAM_SANDBOX") == "weak"
           else _bwrap.available())
    if why is None:
        return "bwrap"
    sys.stderr.write(f"engram: sandbox: weak ({why}); generated code runs under the "
                     "Python audit hook only\n")
    return "weak"


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


class _Channel:
    """The verdict pipes: a nonce in (read once by ``_verdict.py``), outcome lines out."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(16)
        self.nonce_read, nonce_write = os.pipe()
        os.write(nonce_write, self.nonce.encode())
        os.close(nonce_write)
        self.out_read, self.out_write = os.pipe()
        self._chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)

    @property
    def child_fds(self) -> tuple[int, int]:
        return self.nonce_read, self.out_write

    def started(self) -> None:
        os.close(self.nonce_read)
        os.close(self.out_write)
        self._reader.start()

    def _drain(self) -> None:
        while chunk := os.read(self.out_read, 65536):
            self._chunks.append(chunk)

    def lines(self) -> list[list[str]]:
        """The outcome lines carrying the nonce, split on tabs (nonce dropped)."""
        self._reader.join(timeout=2.0)
        text = b"".join(self._chunks).decode("utf-8", "replace")
        os.close(self.out_read)
        out = []
        for line in text.splitlines():
            nonce, _, rest = line.partition("\t")
            if secrets.compare_digest(nonce, self.nonce):
                out.append(rest.split("\t", 1))
        return out

    def close_child_side(self) -> None:
        for fd in self.child_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


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
        shutil.copyfile(VERDICT, self.root / "guard" / "engram_verdict.py")
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
        """Run ``argv`` in the work dir under the limits; never raises for the code's faults.
        ``ok`` is the exit status: use ``pytest`` or ``asserts`` for a verdict."""
        return self._run(argv, None)

    def _run(self, argv: list[str], channel: _Channel | None) -> RunResult:
        jail = mode()
        env = self.env()
        cgroup = None
        if jail == "bwrap":
            command = _bwrap.argv(self.root, self.work, argv)
            env["ENGRAM_SANDBOX_NPROC"] = str(self.limits.processes)
            cgroup = _bwrap.PidsCgroup(self.limits.processes)
        else:
            command = ["unshare", "-rn", *argv] if network_namespace() else argv
        fds: tuple[int, ...] = ()
        if channel is not None:
            fds = channel.child_fds
            env["ENGRAM_VERDICT_FDS"] = ",".join(map(str, fds))

        def child() -> None:
            _limit(self.limits)
            if cgroup is not None:
                cgroup.enter()

        started = time.monotonic()
        try:
            proc = subprocess.Popen(command, cwd=self.work, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    preexec_fn=child, start_new_session=True, pass_fds=fds)
        except BaseException:
            if channel is not None:
                channel.close_child_side()
            if cgroup is not None:
                cgroup.close()
            raise
        if channel is not None:
            channel.started()
        timed_out = False
        try:
            out, err = proc.communicate(timeout=self.limits.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        finally:
            if cgroup is not None:
                cgroup.close()
        return RunResult(proc.returncode, timed_out,
                         out.decode("utf-8", "replace")[-OUTPUT_LIMIT:],
                         err.decode("utf-8", "replace")[-OUTPUT_LIMIT:],
                         time.monotonic() - started, sandbox=jail)

    def python(self, rel: str) -> RunResult:
        """Run one script of the work dir (its exit status only: no verdict)."""
        return self.run([sys.executable, str(_inside(self.work, rel))])

    def pytest(self, *targets: str) -> RunResult:
        """Run pytest node ids (``tests/test_x.py::test_y``) of the work dir in one process,
        stopping at the first failure: ``ok`` means the harness saw every one pass."""
        if not targets:
            raise ValueError("no tests to run")
        channel = _Channel()
        result = self._run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                            "-p", "engram_verdict", "--rootdir", str(self.work), *targets],
                           channel)
        lines = channel.lines()
        return _with(result, passed={r[1] for r in lines if r[0] == "pass" and len(r) == 2},
                     failed={r[1] for r in lines if r[0] == "fail" and len(r) == 2},
                     expected=tuple(targets))

    def asserts(self, code: str, tests: list[str]) -> RunResult:
        """CodeIF-Bench's harness: ``code`` as a module, then each assert of ``tests`` run on
        its own in its namespace; ``passed`` holds the indices (as text) of those that
        passed, as the harness side reported them (none if the code crashed or exited)."""
        self.write("solution.py", code)
        tests_file = self.root / "guard" / "tests.json"
        tests_file.write_text(json.dumps(tests))
        channel = _Channel()
        result = self._run([sys.executable, str(self.root / "guard" / "engram_verdict.py"),
                            str(self.work / "solution.py"), str(tests_file)], channel)
        passed: set[str] = set()
        for fields in channel.lines():
            if fields[0] == "passed" and len(fields) == 2:
                try:
                    passed = {str(int(i)) for i in json.loads(fields[1])}
                except (ValueError, TypeError):
                    passed = set()
        return _with(result, passed=passed, failed=set(), expected=None)

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _with(result: RunResult, *, passed: set[str], failed: set[str],
          expected: tuple[str, ...] | None) -> RunResult:
    return RunResult(result.returncode, result.timed_out, result.stdout, result.stderr,
                     result.seconds, result.sandbox, frozenset(passed), frozenset(failed),
                     expected)
