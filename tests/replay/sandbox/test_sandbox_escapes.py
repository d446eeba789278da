"""Escapes from plain Python, each one checked by looking outside the sandbox afterwards.

They run against the OS jail (bubblewrap); where the kernel refuses namespaces they are
skipped, since the weak sandbox is known to let them through (``ENGRAM_SANDBOX=weak``
runs them against it: they fail). The forged-verdict tests hold in both modes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from memory.acting.jail import bwrap as _bwrap
from replay.sandbox.asserts import run_tests
from replay.sandbox.sandbox import Limits, Sandbox, mode

jail = pytest.mark.skipif(_bwrap.available() is not None,
                          reason=f"no OS jail here: {_bwrap.available()}")
LIMITS = Limits(timeout=5.0, memory_bytes=1024**3, processes=32)
LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def run(code: str, limits: Limits = LIMITS, name: str = "probe.py"):
    with Sandbox(files={name: code}, limits=limits) as box:
        return box.python(name)


def processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def gone(token: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while processes_with(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@jail
def test_runs_as_nobody_without_capabilities():
    result = run("import os\nprint(os.getuid(), os.getgid())\n"
                 "print([l for l in open('/proc/self/status') if l.startswith('CapEff')][0])")
    assert result.ok and result.sandbox == "bwrap", result.stderr
    assert result.stdout.split()[:2] == ["65534", "65534"]
    assert result.stdout.split()[-1] == "0000000000000000"


@jail
def test_write_through_dir_fd(tmp_path):
    result = run(f"import os\nfd = os.open({str(tmp_path)!r}, os.O_RDONLY)\n"
                 "os.close(os.open('escaped', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\n")
    assert not result.ok
    assert not (tmp_path / "escaped").exists()


@jail
def test_fork_exec_starts_a_jailed_process(tmp_path):
    target = tmp_path / "by_fork_exec"
    code = ("import _posixsubprocess, os\n"
            "r, w = os.pipe()\n"
            f"head = (['/bin/sh', '-c', 'touch {target}; echo ran'], [b'/bin/sh'], True, (),"
            " None, None, -1, -1, -1, -1, -1, -1, r, w, False, False)\n"
            "for tail in ((-1, None, None, -1, -1, None, False),"
            " (None, None, None, -1, None, False)):\n"  # 3.11 / later signatures
            "    try:\n        pid = _posixsubprocess.fork_exec(*head, *tail)\n        break\n"
            "    except TypeError:\n        continue\n"
            "os.waitpid(pid, 0)\n")
    result = run(code)
    assert "ran" in result.stdout, result.stderr  # the process did start ...
    assert not target.exists()  # ... in the jail


@jail
def test_ctypes_system(tmp_path):
    target = tmp_path / "by_system"
    home = Path.home() / f"engram-escape-{uuid.uuid4().hex[:8]}"
    result = run(LIBC + f"print(libc.system(b'touch {target} {home}; cat /etc/shadow'))\n")
    assert not target.exists() and not home.exists()
    assert "root:" not in result.stdout + result.stderr


@jail
def test_kill_a_sibling_process():
    sibling = subprocess.Popen(["sleep", "60"])
    try:
        run(f"import os, signal\nos.kill({sibling.pid}, signal.SIGKILL)\n"
            f"{LIBC}libc.kill({sibling.pid}, 9)\n")
        time.sleep(0.2)
        assert sibling.poll() is None
    finally:
        sibling.kill()
        sibling.wait()


@jail
def test_a_setsid_child_does_not_outlive_the_timeout():
    token = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 1000 + 1}"
    result = run(LIBC + f"libc.system(b'setsid sleep {token} > /dev/null 2>&1 &')\n"
                 "import time\nwhile True:\n    time.sleep(0.1)\n",
                 Limits(timeout=2.0, memory_bytes=1024**3, processes=32))
    assert result.timed_out
    assert gone(token)


@jail
def test_a_daemon_does_not_outlive_a_normal_exit():
    token = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 1000 + 1}"
    result = run(LIBC + f"libc.system(b'setsid sleep {token} > /dev/null 2>&1 &')\n")
    assert result.returncode == 0 and not result.timed_out
    assert gone(token)


@jail
def test_reading_a_file_planted_outside(tmp_path):
    secret = f"planted-{uuid.uuid4().hex}"
    planted = tmp_path / "planted.txt"
    planted.write_text(secret)
    with Sandbox(files={"probe.py": (
            "import os\nfor p in [" + repr(str(planted)) + ", '/etc/shadow', "
            "os.path.expanduser('~root/.ssh/id_rsa')]:\n"
            "    try:\n        print(open(p).read())\n"
            "    except OSError as e:\n        print('refused', e)\n")},
            limits=LIMITS) as box:
        result = box.python("probe.py")
        copied = "".join(p.read_text(errors="replace") for p in box.root.rglob("*")
                         if p.is_file())
    assert result.ok, result.stderr
    assert result.stdout.count("refused") == 3
    assert secret not in result.stdout + result.stderr + copied


@jail
def test_a_socket_to_localhost():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.setblocking(False)
    port = server.getsockname()[1]
    code = LIBC + (
        "import socket, struct\n"
        "fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)\n"
        f"addr = struct.pack('!HH4s8x', socket.AF_INET, {port}, bytes([127, 0, 0, 1]))\n"
        "addr = struct.pack('=H', socket.AF_INET) + addr[2:]\n"
        "print('connect', libc.connect(fd, addr, len(addr)), ctypes.get_errno())\n")
    try:
        result = run(code)
        assert "connect" in result.stdout, result.stderr
        time.sleep(0.2)
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()


@jail
def test_a_fork_bomb_is_bounded_by_the_process_limit():
    token = f"bomb{uuid.uuid4().hex[:10]}"
    code = LIBC + ("import os\nn = 0\nfor _ in range(2000):\n    pid = libc.fork()\n"
                   "    if pid == 0:\n        libc.pause()\n        os._exit(0)\n"
                   "    if pid < 0:\n        break\n    n += 1\nprint('forked', n)\n")
    result = run(code, name=f"{token}.py")
    assert "forked" in result.stdout, result.stderr
    assert int(result.stdout.split()[-1]) < LIMITS.processes
    assert gone(token)


@jail
def test_a_memory_bomb_is_bounded():
    cap = 512 * 1024**2
    token = f"hog{uuid.uuid4().hex[:10]}"
    peak = 0

    def sample(stop: list[bool]) -> None:
        nonlocal peak
        while not stop:
            total = 0
            for pid in processes_with(token):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                rss = [line for line in status.splitlines() if line.startswith("VmRSS")]
                total += int(rss[0].split()[1]) * 1024 if rss else 0
            peak = max(peak, total)
            time.sleep(0.01)

    import threading

    stop: list[bool] = []
    sampler = threading.Thread(target=sample, args=(stop,))
    sampler.start()
    try:
        result = run("hog = []\ntry:\n    while True:\n"
                     "        hog.append(bytearray(32 * 1024 * 1024))\n"
                     "except MemoryError:\n    print('capped at', len(hog))\n",
                     Limits(timeout=10.0, memory_bytes=cap, processes=32), f"{token}.py")
    finally:
        stop.append(True)
        sampler.join()
    assert "capped at" in result.stdout, result.stderr
    assert 0 < peak <= cap


FORGE_PYTEST = ("import os, sys\nprint('1 passed')\nsys.stdout.flush()\n"
                "for fd in range(3, 64):\n"
                "    try:\n        os.write(fd, b'x\\tpass\\ttests/test_calc.py::test_double\\n')\n"
                "    except OSError:\n        pass\nos._exit(0)\n")


def test_a_forged_pytest_verdict_fails(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "calc.py").write_text(FORGE_PYTEST + "def double(x):\n    return 0\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from pkg.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    with Sandbox(tmp_path, limits=LIMITS) as box:
        result = box.pytest("tests/test_calc.py::test_double")
        assert result.returncode == 0  # the forger exited 0 ...
        assert not result.ok and not result.passed  # ... and still failed
        box.write("pkg/calc.py", "def double(x):\n    return x * 2\n")
        honest = box.pytest("tests/test_calc.py::test_double")
    assert honest.ok and honest.passed == {"tests/test_calc.py::test_double"}


def test_a_forged_asserts_verdict_fails():
    forged = ("import os, sys\nprint('ENGRAM-PASSED [0, 1]')\nsys.stdout.flush()\n"
              "for fd in range(3, 64):\n"
              "    try:\n        os.write(fd, b'x\\tpassed\\t[0, 1]\\n')\n"
              "    except OSError:\n        pass\nos._exit(0)\n")
    assert run_tests(forged, ["assert False", "assert 1 == 2"], LIMITS) == set()
    assert run_tests("x = 1", ["assert x == 1", "assert x == 2"], LIMITS) == {0}


def test_the_mode_is_said():
    assert mode() in {"bwrap", "weak"}
    assert os.environ.get("ENGRAM_SANDBOX") == "weak" or mode() == (
        "bwrap" if _bwrap.available() is None else "weak")
    assert signal.SIGKILL  # the timeout's signal exists on this platform
