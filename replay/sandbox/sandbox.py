"""Run generated code and its tests away from the user's tree.

Each run gets a fresh temp dir (the work copy, HOME and TMPDIR all inside it), a
wall-clock timeout, rlimits on memory, CPU time and file size, and runs inside the OS
jail of ``memory/acting/jail/bwrap.py`` (bubblewrap: user, pid, mount and network
namespaces, uid 65534 inside, the temp dir the only writable tree, a process limit,
everything killed with the pid namespace). Where the kernel refuses namespaces, engram
says so once and falls back to the weak sandbox: the process group is killed at the
timeout, a network namespace when ``unshare -rn`` works, and the audit hook of
``memory/acting/jail/_guard.py`` (installed as ``sitecustomize`` in both modes) refusing
writes outside the temp dir, processes and sockets from Python. ``RunResult.sandbox``
says which one ran ("bwrap" or "weak").

Verdicts (``pytest`` and ``asserts``) are decided by a process the tested code does not
share: the runner (``_runner.py``), the jail's first process, which never imports the
tested code, is non-dumpable (no child reads its memory or takes its descriptors), runs
each test in a child of its own (``_verdict.py``: one assert group, or one pytest target;
a pytest child is forked from the run's zygote, ``_zygote.py``, which imported pytest once
and is handed descriptors only, never what a child runs or how it ended) and sends the
verdicts on a pipe only it holds, headed by a nonce the host gave it. A
child's test passes only if it writes back the one-time token it was handed before any
tested code ran, after the test, and exits normally; and no test of a run passes if the
run's check test passes: a real test of the run with one expected value changed
(``_check.py``: an assert group, or a copy of a target's test beside it, renamed alike),
which fails for any code that passes the original, so passing it as well as the
original means the reports were forged. Wrong code may pass it honestly (its wrong value
may be the one the check expects, or it fails ``assert X`` and so passes the negated
check): where the original failed, a re-check (the literal moved to a third value, or
put back) decides, which such code fails too.

What this rules out: exiting early with any status (``os._exit(0)``, ``sys.exit(0)``),
crashing, hanging; writing pass lines to every descriptor; calling, finding (``gc``)
or imitating the reporter, or reading its token, when done the same way in every test
of the run; rebinding builtins (``exec``, ``compile``, ``isinstance``: restored before
each test) or installing a trace function at import; patching pytest so that every test
passes. What it cannot rule out, since the tests run in the tested code's own process:
code that special-cases the tests' inputs (or reads the tests and returns what they
expect); values that lie about themselves (an ``__eq__`` that is always true); code that
changes how the statement calling it runs (a trace function set during the call that
jumps past the assert, builtins rebound during the call); code that knows the right
answer; code that keeps state across the run's processes (an asserts run puts the check
before the group it copies, so such code can hold back only on that group); and the
fallback checks, when no test has a top-level ``assert X == literal``: ``assert not (X)``,
else the constant ``assert a == b`` in a file of its own, which code can tell by its
text. One that forges without telling them apart escapes only by missing the check:
forging m of a run's n + 1 children (assert groups or pytest processes, the check's
among them; the re-check, shaped like the check, is forged alike), with probability
(n + 1 - m) / (n + 1). In the weak sandbox run as root, a child may read the runner's
memory (root may trace any process), and with it which test is the check. A child may kill
or stop the zygote: the later children then start as processes of their own (after a
10 s wait for a stopped one), which tells none of them which is the check. In the OS jail
the sandbox's root is read-only but for ``work``, ``home`` and ``tmp``, each mounted on
its own (neither renamed nor replaced by a link to a host path), so the guard's directory
(the runner, the harness, the zygote) cannot be rewritten; it is also copied afresh
before every run. The weak sandbox's audit hook refuses writes there too, but ctypes
passes any audit hook, and with no pid namespace a process forked through it may outlive
its run: in the weak sandbox a run's code can still reach the next run of the same
``Sandbox``. Defaults
follow DevEval's harness: 60 s per test, a 5 GB memory cap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memory.acting.jail import GUARD
from memory.acting.jail import bwrap as _bwrap
from memory.acting.jail.limits import limited

VERDICT = Path(__file__).with_name("_verdict.py")
RUNNER = Path(__file__).with_name("_runner.py")
CHECK = Path(__file__).with_name("_check.py")
ZYGOTE = Path(__file__).with_name("_zygote.py")
IGNORED = shutil.ignore_patterns(".git", ".venv", "venv", "node_modules", "__pycache__",
                                 ".pytest_cache", "*.pyc")
OUTPUT_LIMIT = 20_000  # characters of stdout/stderr kept per run
CONSTANT_CHECK = re.compile(r"test_[0-9a-f]{8}\.py")  # the runner's last-resort check file


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
    passed: frozenset[str] = frozenset()  # ids the runner saw pass
    failed: frozenset[str] = frozenset()  # ids the runner saw fail (or show no verdict)
    expected: tuple[str, ...] | None = None  # the ids a verdict run must see pass
    forged: bool = False  # the run's check test passed: the reports were forged
    check: str = ""  # the check's kind: "literal", "negated" or "constant" (engram_check)

    @property
    def ok(self) -> bool:
        """Exit 0 in time and, for a verdict run, every expected id reported passed by the
        harness (a node id, a file or a class matches the tests under it), none failed."""
        if self.returncode != 0 or self.timed_out:
            return False
        if self.expected is None:
            return True
        return not self.failed and bool(self.passed) and self.passed_all(self.expected)


    def passed_all(self, targets: tuple[str, ...] | list[str]) -> bool:
        """Whether the runner saw every one of ``targets`` (node ids, files or classes)
        pass and none of the tests under them fail."""
        return all(any(_covers(t, node) for node in self.passed)
                   and not any(_covers(t, node) for node in self.failed) for t in targets)


def _covers(target: str, node: str) -> bool:
    target = target.rstrip("/")
    return node == target or node.startswith((target + "::", target + "[", target + "/"))


@lru_cache(maxsize=1)
def mode() -> str:
    """"bwrap" when the OS jail works here, else "weak" (said once, on stderr); the
    environment variable ``ENGRAM_SANDBOX=weak`` asks for the weak one."""
    from memory.settings import current

    why = ("ENGRAM_SANDBOX=weak" if current().sandbox == "weak"
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


def _inside(root: Path, rel: str) -> Path:
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()):
        raise SandboxError(f"{rel!r} leads outside the sandbox")
    return path


class _Channel:
    """The runner's result pipe (its write end passed to the runner alone) and the nonce
    heading the result line (sent in the job, on the runner's stdin)."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(16)
        self.out_read, self.out_write = os.pipe()
        self._chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)

    @property
    def child_fds(self) -> tuple[int, ...]:
        return (self.out_write,)

    def started(self) -> None:
        os.close(self.out_write)
        self._reader.start()

    def _drain(self) -> None:
        while chunk := os.read(self.out_read, 65536):
            self._chunks.append(chunk)

    def result(self) -> dict | None:
        """The runner's result (None: it sent none, e.g. killed at the timeout)."""
        self._reader.join(timeout=2.0)
        text = b"".join(self._chunks).decode("utf-8", "replace")
        os.close(self.out_read)
        for line in text.splitlines():
            nonce, _, rest = line.partition("\t")
            if secrets.compare_digest(nonce, self.nonce):
                try:
                    found = json.loads(rest)
                except ValueError:
                    return None
                return found if isinstance(found, dict) else None
        return None

    def close_child_side(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.out_write)


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
        for sub in ("home", "tmp"):
            (self.root / sub).mkdir()
        self._install_guard()
        for rel, text in (files or {}).items():
            self.write(rel, text)

    def _install_guard(self) -> None:
        """The guard, the verdict harness and the zygote, copied afresh before every run:
        read-only inside the OS jail, but the weak sandbox cannot stop a run's code from
        rewriting them for the next run."""
        guard = self.root / "guard"
        if guard.exists():
            shutil.rmtree(guard)
        (guard / "zygote").mkdir(parents=True)  # off the guard's directory
        for source, name in ((GUARD, "sitecustomize.py"), (VERDICT, "engram_verdict.py"),
                             (RUNNER, "engram_runner.py"), (CHECK, "engram_check.py"),
                             (ZYGOTE, "zygote/engram_zygote.py")):
            shutil.copyfile(source, guard / name)

    def write(self, rel: str, text: str) -> Path:
        path = _inside(self.work, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def read(self, rel: str) -> str:
        return _inside(self.work, rel).read_text(encoding="utf-8")

    def env(self) -> dict[str, str]:
        path = [self.root / "guard", self.work]
        if (self.work / "src").is_dir():  # a src layout: its packages import as installed
            path.append(self.work / "src")
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(self.root / "home"),
            "TMPDIR": str(self.root / "tmp"),
            "PYTHONPATH": ":".join(map(str, path)),
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

    def _run(self, argv: list[str], channel: _Channel | None, job: bytes | None = None,
             timeout: float | None = None) -> RunResult:
        jail = mode()
        env = self.env()
        cgroup = None
        self._install_guard()
        if jail == "bwrap":
            command = _bwrap.argv(self.root, self.work, argv, writable=(
                self.work, self.root / "home", self.root / "tmp"))  # the guard's: read-only
            env["ENGRAM_SANDBOX_NPROC"] = str(self.limits.processes)
            cgroup = _bwrap.PidsCgroup(self.limits.processes)
        else:
            command = ["unshare", "-rn", *argv] if network_namespace() else argv
        fds: tuple[int, ...] = ()
        if channel is not None:
            fds = channel.child_fds
            env["ENGRAM_RUNNER_FD"] = str(channel.out_write)

        command = limited(command, timeout=self.limits.timeout,
                          memory_bytes=self.limits.memory_bytes,
                          file_bytes=self.limits.file_bytes,
                          cgroup_procs=cgroup.procs if cgroup is not None else None)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(command, cwd=self.work, env=env,
                                    stdin=subprocess.DEVNULL if job is None else subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, pass_fds=fds)
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
            out, err = proc.communicate(job, timeout=timeout or self.limits.timeout)
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
        """Run pytest node ids (``tests/test_x.py::test_y``, a file, a class) of the work dir,
        each target in a pytest process of its own beside the check test: ``ok`` means the
        runner saw every target pass."""
        if not targets:
            raise ValueError("no tests to run")
        saved = _Saved(targets, self.work)
        try:
            result, found = self._verdicts({"mode": "pytest", "targets": list(targets)},
                                           len(targets) + 2)  # the check, the re-check
        finally:  # whatever the runner did, or could not undo when killed at the timeout
            saved.restore()
        if found is None:
            return _with(result, passed=set(), failed=set(targets), expected=tuple(targets))
        return _with(result, passed=set(found["passed"]), failed=set(found["failed"]),
                     expected=tuple(targets), forged=found["forged"],
                     check=str(found.get("check", "")))

    def asserts(self, code: str, tests: list[str]) -> RunResult:
        """CodeIF-Bench's harness: ``code`` as a module, then one assert group of ``tests``
        in its namespace, each in a process of its own; ``passed`` holds the indices (as
        text) of those the runner saw pass (none if the check test passed)."""
        path = self.write("solution.py", code)
        result, found = self._verdicts({"mode": "asserts", "code": str(path),
                                        "tests": list(tests), "site": _site_packages()},
                                       len(tests) + 2)
        if found is None:
            return _with(result, passed=set(), failed=set(), expected=None)
        return _with(result, passed={str(i) for i in found["passed"]}, failed=set(),
                     expected=None, forged=found["forged"], check=str(found.get("check", "")))

    def _verdicts(self, job: dict, children: int) -> tuple[RunResult, dict | None]:
        """Run the runner on ``job``; (the run, its result or None). Each child has the
        test timeout; the whole run that many plus a margin."""
        channel = _Channel()
        job = {**job, "nonce": channel.nonce, "timeout": self.limits.timeout}
        result = self._run([sys.executable, "-I", "-S", str(self.root / "guard" /
                                                          "engram_runner.py")],
                           channel, json.dumps(job).encode(),
                           timeout=self.limits.timeout * children + 10.0)
        found = channel.result()
        if found is not None and found.get("timed_out"):
            result = dataclasses.replace(result, timed_out=True)
        return result, found

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@lru_cache(maxsize=1)
def _site_packages() -> list[str]:
    """The interpreter's site-packages (asserts children start without ``site``)."""
    return [p for p in site.getsitepackages() if Path(p).is_dir()]


class _Saved:
    """What a pytest run's runner may change, kept by the host so that a reused work dir
    is as it was after the run even when the runner was killed before undoing it: the
    bytes of every test file under the targets (a twin is written beside a test) and the
    names in the folder where the constant check's file is added."""

    def __init__(self, targets: tuple[str, ...], work: Path) -> None:
        self.files: dict[Path, bytes] = {}
        for target in targets:
            with contextlib.suppress(SandboxError, OSError):
                path = _inside(work, target.split("::")[0])
                found = [path] if path.is_file() else sorted(path.rglob("*.py"))
                self.files.update((p, p.read_bytes()) for p in found if p.is_file())
        folder = work / os.path.dirname(targets[0].split("::")[0])  # as the runner's
        self.folder = folder if folder.is_dir() and folder.resolve().is_relative_to(
            work.resolve()) else work
        self.names = {p.name for p in self.folder.iterdir()}

    def restore(self) -> None:
        for path, data in self.files.items():
            with contextlib.suppress(OSError):
                if not path.is_file() or path.read_bytes() != data:
                    path.write_bytes(data)
        for path in self.folder.iterdir():
            if path.name not in self.names and CONSTANT_CHECK.fullmatch(path.name):
                with contextlib.suppress(OSError):
                    path.unlink()


def _with(result: RunResult, *, passed: set[str], failed: set[str],
          expected: tuple[str, ...] | None, forged: bool = False,
          check: str = "") -> RunResult:
    return dataclasses.replace(result, passed=frozenset(passed), failed=frozenset(failed),
                               expected=expected, forged=forged, check=check)
