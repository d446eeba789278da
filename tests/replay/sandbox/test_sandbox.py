"""The sandbox with real subprocesses: bad generated code fails cleanly, the user's tree
stays as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from replay.sandbox.sandbox import Limits, Sandbox, SandboxError


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        h.update(str(path.relative_to(root)).encode())
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


@pytest.fixture
def user_tree(tmp_path: Path) -> Path:
    root = tmp_path / "user"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text("def double(x):\n    raise NotImplementedError\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from pkg.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    return root


LIMITS = Limits(timeout=5.0, memory_bytes=1024**3)


def run_with(user_tree: Path, body: str, limits: Limits = LIMITS) -> tuple[bool, str]:
    with Sandbox(user_tree, limits=limits) as box:
        box.write("pkg/calc.py", f"def double(x):\n{body}\n")
        result = box.pytest("tests/test_calc.py::test_double")
        return result.ok, result.stdout + result.stderr


def test_several_tests_in_one_run_pass_only_if_all_pass(user_tree):
    (user_tree / "tests" / "test_more.py").write_text(
        "from pkg.calc import double\n\n\ndef test_zero():\n    assert double(0) == 0\n\n\n"
        "def test_negative():\n    assert double(-1) == -2\n")
    nodes = ["tests/test_calc.py::test_double", "tests/test_more.py::test_zero",
             "tests/test_more.py::test_negative"]
    with Sandbox(user_tree, limits=LIMITS) as box:
        box.write("pkg/calc.py", "def double(x):\n    return x * 2\n")
        assert box.pytest(*nodes).ok
        box.write("pkg/calc.py", "def double(x):\n    return abs(x) * 2\n")  # -1 fails
        assert not box.pytest(*nodes).ok
        assert box.pytest(*nodes[:2]).ok
        assert not box.pytest("tests/test_more.py::test_missing").ok


def test_a_src_layout_imports_its_packages(tmp_path):
    """A repository whose packages live under src/ (pydash, humanize, cachetools): its
    tests import them as if installed."""
    root = tmp_path / "srcrepo"
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("def double(x):\n    return x * 2\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    with Sandbox(root, limits=LIMITS) as box:
        assert box.pytest("tests/test_calc.py::test_double").ok
        box.write("src/calc/__init__.py", "def double(x):\n    return x\n")
        assert not box.pytest("tests/test_calc.py::test_double").ok


def test_a_correct_function_passes_and_the_tree_is_untouched(user_tree):
    before = tree_digest(user_tree)
    ok, _ = run_with(user_tree, "    return x * 2")
    assert ok
    assert tree_digest(user_tree) == before


def test_writing_outside_the_sandbox_fails_cleanly(user_tree, tmp_path):
    before = tree_digest(user_tree)
    target = user_tree / "pkg" / "calc.py"
    outside = tmp_path / "escaped.txt"
    ok, output = run_with(user_tree, f"    open({str(target)!r}, 'w').write('pwned')\n"
                                     f"    open({str(outside)!r}, 'w').write('x')\n"
                                     "    return x * 2")
    assert not ok and "sandbox" in output
    assert tree_digest(user_tree) == before and not outside.exists()


def test_deleting_outside_fails_too(user_tree):
    before = tree_digest(user_tree)
    ok, _ = run_with(user_tree, "    import os, shutil\n"
                                f"    shutil.rmtree({str(user_tree / 'tests')!r})\n"
                                "    return x * 2")
    assert not ok and tree_digest(user_tree) == before


def test_an_endless_loop_is_killed_at_the_timeout(user_tree):
    with Sandbox(user_tree, limits=Limits(timeout=2.0, memory_bytes=1024**3)) as box:
        box.write("pkg/calc.py", "def double(x):\n    while True:\n        pass\n")
        result = box.pytest("tests/test_calc.py::test_double")
    assert result.timed_out and not result.ok and result.seconds < 10


def test_unbounded_allocation_hits_the_memory_cap(user_tree):
    ok, output = run_with(user_tree, "    hog = []\n    while True:\n"
                                     "        hog.append(bytearray(50 * 1024 * 1024))",
                           Limits(timeout=20.0, memory_bytes=1024**3))  # time to print, loaded
    assert not ok and "MemoryError" in output


def test_network_and_processes_are_refused(user_tree):
    ok, output = run_with(user_tree, "    import socket\n"
                                     "    socket.create_connection(('127.0.0.1', 9))\n"
                                     "    return x * 2")
    assert not ok
    ok, output = run_with(user_tree, "    import subprocess\n"
                                     "    subprocess.run(['true'])\n    return x * 2")
    assert not ok and "starting a process" in output


def test_home_and_tmp_are_inside_and_paths_cannot_escape(user_tree):
    with Sandbox(files={"probe.py": "import os, tempfile\n"
                                    "print(os.environ['HOME'])\nprint(tempfile.gettempdir())\n"
                                    "print(os.getcwd())\n"}, limits=LIMITS) as box:
        result = box.python("probe.py")
        assert result.ok, result.stderr
        assert all(line.startswith(str(box.root)) for line in result.stdout.split())
        with pytest.raises(SandboxError):
            box.write("../escape.py", "x = 1")
