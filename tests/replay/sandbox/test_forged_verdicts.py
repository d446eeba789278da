"""Forged verdicts, in both harnesses: the asserts harness (CodeIF-Bench's mode) and the
generated function's pytest run. Each forgery runs in the tested code of an answer that
fails its tests; none may turn a failure into a pass, and correct code still passes.

The forgeries that do reach a valid report (they read the child's token from its own
process, or make every test pass) are stopped by the run's check test: for those the
tests also assert ``forged``, so they show the check is what stopped them. Where the
kernel refuses namespaces this runs against the weak sandbox (same verdict logic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.sandbox.asserts import run_tests
from replay.sandbox.sandbox import Limits, Sandbox, mode

LIMITS = Limits(timeout=20.0, memory_bytes=1024**3)
WRONG = "def f(x):\n    return 0\n"
RIGHT = "def f(x):\n    return x * 2\n"
TESTS = ["assert f(1) == 2", "assert f(2) == 4\nassert f(0) == 0"]

# -- forgeries from the issue, as written against the old harness ------------------
SEND_VIA_MAIN = "import sys\nsys.modules['__main__']._send('passed\\t[0, 1]')\n"
SEND_VIA_CLOSURE = (
    "import os, sys\n_send = sys.modules['__main__']._send\n"
    "cells = {c.cell_contents for c in _send.__closure__ if isinstance(c.cell_contents, str)}\n"
    "for fd in range(3, 64):\n    for nonce in cells:\n        try:\n"
    "            os.write(fd, f'{nonce}\\tpassed\\t[0, 1]\\n'.encode())\n"
    "        except OSError:\n            pass\nos._exit(0)\n")
SEND_VIA_GC = ("import gc\nfor obj in gc.get_objects():\n"
               "    if callable(obj) and getattr(obj, '__name__', '') == 'send':\n"
               "        obj('passed\\t[0, 1]')\n")
NO_EXEC = "import builtins\nbuiltins.exec = lambda *args, **kwargs: None\n"

# -- the same four, aimed at the new harness: they find its token and report --------
TOKEN_FROM_FRAMES = (  # walk up to the harness's frame, write its token back, exit 0
    "import os, sys\nframe = sys._getframe()\nwhile frame is not None:\n"
    "    seen = frame.f_locals\n"
    "    if 'token' in seen and 'report' in seen:\n"
    "        os.write(seen['report'], (seen['token'] + '\\n').encode())\n"
    "        os._exit(0)\n"
    "    frame = frame.f_back\n")
CALL_THE_HARNESS = (  # call whatever the harness's module offers, then report from frames
    "import sys\nmain = sys.modules['__main__']\n"
    "for name in dir(main):\n"
    "    if name.startswith('_') and callable(getattr(main, name)) and 'one' in name:\n"
    "        try:\n            getattr(main, name)()\n        except BaseException:\n"
    "            pass\n" + TOKEN_FROM_FRAMES)
TOKEN_FROM_GC = (  # every 32-hex string reachable from gc or the stack, to every fd
    "import gc, os, re, sys\nfound = set()\n"
    "objs = gc.get_objects()\nframe = sys._getframe()\n"
    "while frame is not None:\n    objs.append(frame.f_locals)\n    frame = frame.f_back\n"
    "for obj in objs:\n    values = obj.values() if isinstance(obj, dict) else ()\n"
    "    for v in values:\n"
    "        if isinstance(v, str) and re.fullmatch('[0-9a-f]{32}', v):\n"
    "            found.add(v)\n"
    "for fd in range(3, 64):\n    for token in found:\n        try:\n"
    "            os.write(fd, (token + '\\n').encode())\n        except OSError:\n"
    "            pass\nos._exit(0)\n")
NO_BUILTINS = ("import builtins\nbuiltins.exec = lambda *a, **k: None\n"
               "builtins.compile = lambda *a, **k: compile('pass', '<x>', 'exec')\n"
               "builtins.isinstance = lambda *a: True\n")

EXITS = {"os._exit(0)": "import os\nos._exit(0)\n", "sys.exit(0)": "import sys\nsys.exit(0)\n",
         "SystemExit in the call": "import sys\ndef f(x):\n    sys.exit(0)\n"}


def asserts(code: str, tests: list[str] = TESTS):
    with Sandbox(limits=LIMITS) as box:
        return box.asserts(code, tests)


@pytest.mark.parametrize("forgery", [SEND_VIA_MAIN, SEND_VIA_CLOSURE, SEND_VIA_GC, NO_EXEC,
                                     CALL_THE_HARNESS],
                         ids=["main._send", "closure", "gc", "exec", "call the harness"])
def test_the_issues_four_forgeries_fail_the_asserts_harness(forgery):
    assert run_tests(forgery + WRONG, TESTS, LIMITS) == set()
    assert not asserts(forgery + WRONG).forged  # they do not even reach a valid report


@pytest.mark.parametrize("forgery", [TOKEN_FROM_FRAMES, TOKEN_FROM_GC], ids=["frames", "gc"])
def test_reports_written_with_the_stolen_token_are_caught_by_the_check(forgery):
    result = asserts(forgery + WRONG)
    assert result.passed == frozenset()
    assert result.forged  # the report was valid: only the check test stopped it


def test_rebinding_builtins_does_not_skip_or_bend_the_test():
    result = asserts(NO_BUILTINS + WRONG, [*TESTS, "assert isinstance(f(1), str)"])
    assert result.passed == frozenset() and not result.forged
    assert run_tests(NO_BUILTINS + RIGHT, [*TESTS, "assert isinstance(f(1), int)"],
                     LIMITS) == {0, 1, 2}


@pytest.mark.parametrize("exit_code", list(EXITS.values()), ids=list(EXITS))
def test_exiting_early_is_a_failure_in_the_asserts_harness(exit_code):
    result = asserts(exit_code + WRONG if "def f" not in exit_code else exit_code)
    assert result.passed == frozenset() and not result.forged
    assert result.returncode == 0  # the runner itself ended normally


def test_correct_code_passes_and_one_failing_assert_costs_only_itself():
    assert run_tests(RIGHT, TESTS, LIMITS) == {0, 1}
    assert run_tests("def f(x):\n    return 2 if x == 1 else 0\n", TESTS, LIMITS) == {0}
    assert run_tests(RIGHT, ["import sys\nsys.exit(0)", "assert f(3) == 6"], LIMITS) == {1}


# -- the generated function's run: pytest on the target's tests ------------------------
ARGV_NODES = "import sys\nnodes = [a for a in sys.argv[1:] if '::' in a]\n"
CALL_THE_PLUGIN = ARGV_NODES + (  # the reporter's hook, called with made-up reports
    "hook = sys.modules['engram_verdict'].pytest_runtest_logreport\n"
    "class Report:\n    failed, passed, when = False, True, 'call'\n"
    "for node in nodes:\n    r = Report()\n    r.nodeid = node\n    hook(r)\n")
PLUGIN_CLOSURE = ARGV_NODES + (  # its send(), out of the hook's closure
    "hook = sys.modules['engram_verdict'].pytest_runtest_logreport\n"
    "send = [c.cell_contents for c in hook.__closure__ if callable(c.cell_contents)][0]\n"
    "for node in nodes:\n    send('pass', node)\nsend('done', '0')\nimport os\nos._exit(0)\n")
PLUGIN_GC = ARGV_NODES + (
    "import gc, os\n"
    "send = [o for o in gc.get_objects() if getattr(o, '__name__', '') == 'send'][0]\n"
    "for node in nodes:\n    send('pass', node)\nsend('done', '0')\nos._exit(0)\n")
PATCHED_PYTEST = "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"
PATCHED_HOOK = ("import _pytest.runner\n_real = _pytest.runner.TestReport.from_item_and_call\n"
                "def _passing(item, call):\n    report = _real(item, call)\n"
                "    report.outcome = 'passed'\n    report.longrepr = None\n    return report\n"
                "_pytest.runner.TestReport.from_item_and_call = staticmethod(_passing)\n")
PYTEST_FORGERIES = {"plugin hook": CALL_THE_PLUGIN, "plugin closure": PLUGIN_CLOSURE,
                    "gc": PLUGIN_GC, "Function.runtest": PATCHED_PYTEST,
                    "TestReport": PATCHED_HOOK}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text("def double(x):\n    raise NotImplementedError\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from pkg.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
        "def test_zero():\n    assert double(0) == 0\n")
    return root


NODE = "tests/test_calc.py::test_double"


def pytest_run(repo: Path, module: str, *targets: str):
    with Sandbox(repo, limits=LIMITS) as box:
        box.write("pkg/calc.py", module)
        return box.pytest(*(targets or (NODE,)))


@pytest.mark.parametrize("forgery", list(PYTEST_FORGERIES.values()),
                         ids=list(PYTEST_FORGERIES))
def test_forgeries_fail_the_pytest_harness(repo, forgery):
    result = pytest_run(repo, forgery + "def double(x):\n    return 0\n")
    assert not result.ok and result.passed == frozenset()
    assert result.forged  # each reached a valid report: the check test stopped it


@pytest.mark.parametrize("exit_code", list(EXITS.values()), ids=list(EXITS))
def test_exiting_early_is_a_failure_in_the_pytest_harness(repo, exit_code):
    module = exit_code.replace("def f(x)", "def double(x)")
    if "def double" not in module:
        module += "def double(x):\n    return 0\n"
    result = pytest_run(repo, module)
    assert not result.ok and result.passed == frozenset() and not result.forged


def test_the_issues_forgeries_fail_the_pytest_harness_as_written(repo):
    for forgery in (SEND_VIA_MAIN, SEND_VIA_CLOSURE, SEND_VIA_GC):
        assert not pytest_run(repo, forgery + "def double(x):\n    return 0\n").ok


def test_correct_code_passes_the_pytest_harness_per_target(repo):
    right = "def double(x):\n    return x * 2\n"
    result = pytest_run(repo, right, NODE, "tests/test_calc.py::test_zero")
    assert result.ok and not result.forged
    assert result.passed == {NODE, "tests/test_calc.py::test_zero"}
    whole_file = pytest_run(repo, right, "tests/test_calc.py")
    assert whole_file.ok and len(whole_file.passed) == 2
    half = pytest_run(repo, "def double(x):\n    return 0\n", "tests/test_calc.py")
    assert not half.ok and half.passed == {"tests/test_calc.py::test_zero"}


@pytest.mark.skipif(mode() != "bwrap", reason="no OS jail here (or ENGRAM_SANDBOX=weak): "
                    "as root without it, a child may read any process")
def test_a_child_cannot_read_or_trace_the_runner():
    probe = ("import ctypes, os\nppid = os.getppid()\n"
             "for name in ('environ', 'mem', 'fd/0', 'maps'):\n"
             "    try:\n        open(f'/proc/{ppid}/{name}', 'rb').read(64)\n"
             "        print('read', name)\n"
             "    except OSError:\n        print('refused', name)\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "print('ptrace', libc.ptrace(16, ppid, 0, 0))\n")  # PTRACE_ATTACH
    with Sandbox(limits=LIMITS) as box:
        result = box.asserts(probe + WRONG, ["assert f(1) == 2"])
    assert result.sandbox == "bwrap"
    lines = set(result.stdout.splitlines())  # printed once per child (the test, the check)
    assert lines == {"refused environ", "refused mem", "refused fd/0", "refused maps",
                     "ptrace -1"}, result.stdout


# -- forgeries that tell the old check (`assert A == B` in `test_<hex>.py`) by its text --
TELLS_THE_CONSTANT_ASSERT = (  # fail a test with no name in it (two numbers), forge others
    "import os, sys\nframe = sys._getframe()\nwhile frame is not None:\n"
    "    seen = frame.f_locals\n"
    "    if 'token' in seen and 'report' in seen:\n"
    "        if not getattr(seen.get('test'), 'co_names', ('x',)):\n"
    "            os._exit(1)\n"
    "        os.write(seen['report'], (seen['token'] + '\\n').encode())\n"
    "        os._exit(0)\n"
    "    frame = frame.f_back\n")
TELLS_THE_CONSTANT_TEST = (  # every test passes, but one of two constants in test_<hex>.py
    "import inspect, re\nimport _pytest.runner\n"
    "_real = _pytest.runner.TestReport.from_item_and_call\n"
    "def _told(item):\n"
    "    if re.search(r'test_[0-9a-f]{8}\\.py$', str(item.path)):\n"
    "        return True\n"
    "    try:\n        text = inspect.getsource(item.function)\n"
    "    except (OSError, TypeError):\n        return False\n"
    "    return re.search(r'assert \\d+ == \\d+', text) is not None\n"
    "def _passing(item, call):\n    report = _real(item, call)\n"
    "    if call.when == 'call' and not _told(item):\n"
    "        report.outcome = 'passed'\n        report.longrepr = None\n    return report\n"
    "_pytest.runner.TestReport.from_item_and_call = staticmethod(_passing)\n")


def test_telling_the_old_check_by_its_text_no_longer_passes_the_asserts_harness():
    result = asserts(TELLS_THE_CONSTANT_ASSERT + WRONG)
    assert result.check == "literal" and result.forged and result.passed == frozenset()
    # the same forgery against a run left with the constant check (no assert to copy):
    # it tells that one and escapes, which is why the check is now a real test
    plain = ["if f(1) != 2:\n    raise AssertionError", "if f(2) != 4:\n    raise ValueError"]
    escaped = asserts(TELLS_THE_CONSTANT_ASSERT + WRONG, plain)
    assert escaped.check == "constant" and escaped.passed == {"0", "1"}


def test_telling_the_old_check_by_its_text_no_longer_passes_the_pytest_harness(repo):
    result = pytest_run(repo, TELLS_THE_CONSTANT_TEST + "def double(x):\n    return 0\n")
    assert result.check == "literal"
    assert not result.ok and result.passed == frozenset() and result.forged
    (repo / "tests" / "test_calc.py").write_text(  # no assert of its own to copy
        "from pkg.calc import double\n\n\ndef check(value, expected):\n"
        "    assert value == expected\n\n\ndef test_double():\n    check(double(2), 4)\n")
    escaped = pytest_run(repo, TELLS_THE_CONSTANT_TEST + "def double(x):\n    return 0\n")
    assert escaped.check == "constant" and escaped.ok  # the documented gap


@pytest.mark.parametrize("forgery", list(PYTEST_FORGERIES.values()),
                         ids=list(PYTEST_FORGERIES))
def test_the_check_is_a_twin_of_a_real_test_and_stops_the_five_forgeries(repo, forgery):
    """The run's check is one of its targets' own tests, copied beside it with one literal
    changed; both renamed alike. The five pytest forgeries still reach a valid report and
    are stopped by it, whichever form the target takes (a test, a file, a class)."""
    (repo / "tests" / "test_calc.py").write_text(
        "from pkg.calc import double\n\n\nclass TestDouble:\n    def test_two(self):\n"
        "        assert double(2) == 4\n\n    def test_names(self):\n"
        "        assert str(double(3)) == '6'\n")
    wrong = forgery + "def double(x):\n    return 0\n"
    for target in ("tests/test_calc.py", "tests/test_calc.py::TestDouble",
                   "tests/test_calc.py::TestDouble::test_names"):
        result = pytest_run(repo, wrong, target)
        assert result.check == "literal" and result.forged and not result.ok, target
    right = pytest_run(repo, "def double(x):\n    return x * 2\n", "tests/test_calc.py")
    assert right.ok and not right.forged and right.passed == {
        "tests/test_calc.py::TestDouble::test_two", "tests/test_calc.py::TestDouble::test_names"}
