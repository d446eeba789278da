"""A run's pytest children are forked from the run's zygote (``_zygote.py``): they see
the environment and ``sys.path`` a process of their own sees, cannot read or trace the
zygote, and a run whose zygote a test killed still gets its verdicts, its later children
started as processes of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.sandbox.sandbox import Limits, Sandbox, mode

LIMITS = Limits(timeout=20.0, memory_bytes=1024**3)
KILL_THEN_AFTER = ["tests/test_calc.py::test_kills", "tests/test_calc.py::test_after"]

FIND_ZYGOTE = (
    "import json, os, sys\n\n\n"
    "def forked():\n"
    "    return b'engram_zygote' in open('/proc/self/cmdline', 'rb').read()\n\n\n"
    "def zygote():\n"
    "    # the test process's siblings under the runner; the zygote's own fork is its child\n"
    "    mine = os.getppid()\n"
    "    for name in os.listdir('/proc'):\n"
    "        if not name.isdigit() or int(name) == os.getpid():\n"
    "            continue\n"
    "        try:\n"
    "            cmd = open(f'/proc/{name}/cmdline', 'rb').read()\n"
    "            parent = int(open(f'/proc/{name}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "        except (OSError, ValueError, IndexError):\n"
    "            continue\n"
    "        if b'engram_zygote' in cmd and parent == mine:\n"
    "            return int(name)\n"
    "    return None\n\n\n"
    "def say(**fields):\n"
    "    print('PROBE', json.dumps({'forked': forked(), 'env': dict(os.environ),\n"
    "                               'path': sys.path, **fields}))\n"
    "    return 0\n")


def tree(tmp_path: Path, tests: str) -> Path:
    (tmp_path / "pkg").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "calc.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "probe.py").write_text(FIND_ZYGOTE)
    (tmp_path / "tests" / "test_calc.py").write_text(
        "import os, signal, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
        "from probe import say, zygote\nfrom pkg.calc import double\n\n\n" + tests)
    return tmp_path


def probes(stdout: str) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in stdout.splitlines()
            if line.startswith("PROBE {")]


def test_a_forked_child_sees_what_a_child_of_its_own_sees(tmp_path):
    """The first test kills the zygote: the children after it start as processes of their
    own; every child prints its environment and path and fails, so its output is kept."""
    with Sandbox(tree(tmp_path, (
            "def test_kills():\n    pid = zygote()\n    say(killed=pid)\n"
            "    if pid:\n        os.kill(pid, signal.SIGKILL)\n    assert double(1) == 3\n\n\n"
            "def test_after():\n    assert say() == 1\n")), limits=LIMITS) as box:
        result = box.pytest(*KILL_THEN_AFTER)
    assert not result.ok and result.passed == frozenset()
    seen = probes(result.stdout)
    forked = [p for p in seen if p["forked"]]
    own = [p for p in seen if not p["forked"]]
    assert forked and own, result.stdout[-3000:]  # the zygote's children, then a fresh one
    assert any(p.get("killed") for p in forked)
    def env(probe: dict) -> dict:  # less the test's own name
        return {k: v for k, v in probe["env"].items() if k != "PYTEST_CURRENT_TEST"}

    for probe in forked:
        assert env(probe) == env(own[0]) and probe["path"] == own[0]["path"]
    assert "ENGRAM_VERDICT_FDS" not in own[0]["env"]
    assert not any(key.startswith("ENGRAM_ZYGOTE") for key in own[0]["env"])


def test_a_killed_zygote_leaves_the_verdicts_right(tmp_path):
    with Sandbox(tree(tmp_path, (
            "def test_kills():\n    pid = zygote()\n"
            "    if pid:\n        os.kill(pid, signal.SIGKILL)\n    assert double(1) == 2\n\n\n"
            "def test_after():\n    assert double(3) == 6\n")), limits=LIMITS) as box:
        result = box.pytest(*KILL_THEN_AFTER)
        assert result.ok and not result.forged and result.passed == frozenset(KILL_THEN_AFTER)
        box.write("pkg/calc.py", "def double(x):\n    return x + 1\n")  # 1 -> 2 right, 3 wrong
        wrong = box.pytest(*KILL_THEN_AFTER)
    assert not wrong.ok and not wrong.forged
    assert wrong.passed == {"tests/test_calc.py::test_kills"}


@pytest.mark.skipif(mode() != "bwrap", reason="no OS jail here (or ENGRAM_SANDBOX=weak): "
                    "as root without it, a child may read any process")
def test_a_pytest_child_cannot_read_or_trace_the_zygote_or_the_runner(tmp_path):
    probe = (
        "def test_probe():\n    import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    for who, pid in (('zygote', zygote()), ('runner', os.getppid())):\n"
        "        assert pid\n"
        "        for name in ('environ', 'mem', 'fd/0', 'maps'):\n"
        "            try:\n                open(f'/proc/{pid}/{name}', 'rb').read(64)\n"
        "                print('PROBE-LINE read', who, name)\n"
        "            except OSError:\n                print('PROBE-LINE refused', who, name)\n"
        "        print('PROBE-LINE ptrace', who, libc.ptrace(16, pid, 0, 0))\n"
        "    assert double(1) == 3\n")
    with Sandbox(tree(tmp_path, probe), limits=LIMITS) as box:
        result = box.pytest("tests/test_calc.py::test_probe")
    assert result.sandbox == "bwrap"
    lines = {line for line in result.stdout.splitlines() if line.startswith("PROBE-LINE")}
    assert lines == {f"PROBE-LINE {verb} {who} {name}" for who in ("zygote", "runner")
                     for verb, name in [("refused", "environ"), ("refused", "mem"),
                                        ("refused", "fd/0"), ("refused", "maps")]} | {
        "PROBE-LINE ptrace zygote -1", "PROBE-LINE ptrace runner -1"}, result.stdout[-3000:]


def test_the_guard_is_in_every_child_whatever_the_work_dir_holds(tmp_path):
    """A ``sitecustomize.py`` shipped in the tree, or planted by the first test for the
    later children, never replaces the guard (the zygote has nothing of the work dir on
    its path, and a child imports the guard by its path before the work dir is on it)."""
    root = tree(tmp_path, (
        "def test_plants():\n"
        "    open(os.path.join(os.getcwd(), 'pkg', 'sitecustomize.py'), 'w').write(\n"
        "        'print(\"PLANTED\" \"-RAN\")\\n')\n"  # the marker not in the source
        "    say(guard=sys.modules['sitecustomize'].__file__, fork=can_fork())\n"
        "    assert double(1) == 3\n\n\n"
        "def test_after():\n"
        "    say(guard=sys.modules['sitecustomize'].__file__, fork=can_fork())\n"
        "    assert double(1) == 3\n\n\n"
        "def can_fork():\n    try:\n        pid = os.fork()\n    except PermissionError:\n"
        "        return False\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\n"
        "    return True\n"))
    (root / "sitecustomize.py").write_text("print('SHIPPED-RAN')\n")
    with Sandbox(root, limits=LIMITS) as box:
        box.write("pkg/__init__.py", "import os, sys\n"
                  "sys.path.insert(0, os.path.dirname(__file__))\n")  # the planted one's dir
        result = box.pytest("tests/test_calc.py::test_plants", "tests/test_calc.py::test_after")
    seen = probes(result.stdout)
    assert any(p["forked"] for p in seen), result.stdout[-2000:]
    assert {Path(p["guard"]).parent.name for p in seen} == {"guard"}
    assert not any(p["fork"] for p in seen)
    assert "SHIPPED-RAN" not in result.stdout + result.stderr
    assert "PLANTED-RAN" not in result.stdout + result.stderr


def test_a_thread_left_running_holds_a_forked_child_as_it_would_a_process_of_its_own(tmp_path):
    """The interpreter's end joins non-daemon threads: a test that leaves one running
    does not end well, forked or not."""
    with Sandbox(tree(tmp_path, (
            "def test_thread():\n    import threading, time\n"
            "    threading.Thread(target=time.sleep, args=(3600,)).start()\n"
            "    assert double(2) == 4\n")), limits=Limits(timeout=4.0)) as box:
        result = box.pytest("tests/test_calc.py::test_thread")
    assert not result.ok and result.passed == frozenset()


FORGING_RUNNER = (
    "import json, os, sys\nfd = int(os.environ['ENGRAM_RUNNER_FD'])\n"
    "job = json.loads(sys.stdin.read())\n"
    "row = {'passed': job['targets'], 'failed': [], 'forged': False, 'timed_out': False,\n"
    "       'check': 'literal'}\n"
    "os.write(fd, (job['nonce'] + '\\t' + json.dumps(row) + '\\n').encode())\n")


def test_a_run_cannot_rewrite_the_runner_or_the_zygote_for_the_next(tmp_path):
    """The harness's files are read-only in the jail and copied afresh before each run."""
    plant = (
        "def test_plants():\n    guard = os.path.join(os.environ['ENGRAM_SANDBOX_ROOT'], 'guard')\n"
        f"    for name in ('engram_runner.py', 'zygote/engram_zygote.py'):\n"
        "        try:\n"
        f"            open(os.path.join(guard, name), 'w').write({FORGING_RUNNER!r})\n"
        "        except OSError:\n            pass\n"
        "    assert double(1) == 2\n\n\n"
        "def test_wrong():\n    assert double(1) == 5\n")
    with Sandbox(tree(tmp_path, plant), limits=LIMITS) as box:
        box.pytest("tests/test_calc.py::test_plants")
        wrong = box.pytest("tests/test_calc.py::test_wrong")
    assert not wrong.ok and wrong.passed == frozenset()


@pytest.mark.skipif(mode() != "bwrap", reason="the OS jail's mounts (or ENGRAM_SANDBOX=weak)")
def test_a_run_cannot_swap_the_work_dir_for_a_link(tmp_path):
    """Only ``work``, ``home`` and ``tmp`` are writable in the jail, each a mount point:
    renaming ``work`` (and linking a host path in its place) fails, so the host's later
    writes and restores stay inside the sandbox."""
    host = tmp_path / "host"
    host.mkdir()
    swap = (
        "def test_swaps():\n    import ctypes\n"
        "    root = os.environ['ENGRAM_SANDBOX_ROOT']\n"
        "    for name in ('work', 'guard', 'home'):\n"
        "        try:\n"
        "            os.rename(os.path.join(root, name), os.path.join(root, 'x' + name))\n"
        "            print('PROBE-LINE renamed', name)\n"
        "        except OSError:\n            print('PROBE-LINE refused', name)\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        f"    libc.symlink({str(host).encode()!r}, os.path.join(root, 'work').encode())\n"
        "    assert double(1) == 3\n\n\n"
        "def test_fine():\n    assert double(2) == 4\n")
    with Sandbox(tree(tmp_path / "repo", swap), limits=LIMITS) as box:
        result = box.pytest("tests/test_calc.py::test_swaps")
        lines = {x for x in result.stdout.splitlines() if x.startswith("PROBE-LINE")}
        assert lines == {"PROBE-LINE refused work", "PROBE-LINE refused guard",
                         "PROBE-LINE refused home"}, result.stdout[-2000:]
        assert box.work.is_dir() and not box.work.is_symlink()
        box.write("planted.py", "x = 1\n")
        assert box.pytest("tests/test_calc.py::test_fine").ok
    assert list(host.iterdir()) == []
