"""Wrong code is never judged forged: it may compute the very value the run's check
expects (``double`` as ``x * 3`` gives 6, and the twin of ``assert double(2) == 4`` moves
4 by 1 to 9, so 1 run in 18 expects 6: the flaky agentic replay test). Here the check's
draw is pinned to that value, so the case runs every time: the copied ``engram_check``
gets a ``_draw`` that changes an int to 6 (the first change only: the re-check moves
it to a third value; every change: there is no third value, the re-check puts it back).
The forgeries stay forged under the same pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.sandbox import _check
from replay.sandbox.sandbox import Sandbox
from tests.replay.sandbox.test_forged_verdicts import (
    CALL_THE_PLUGIN,
    LIMITS,
    NODE,
    PATCHED_HOOK,
    TOKEN_FROM_FRAMES,
    pytest_run,
)

TRIPLE = "def double(x):\n    return x * 3\n"
ASSERTS = ["assert f(2) == 4", "assert not f(0)"]  # only the first has a literal to change


@pytest.fixture(params=["first", "every"])
def pinned(request, tmp_path: Path, monkeypatch) -> str:
    """The check module the sandbox copies, its int changes pinned to 6."""
    every = request.param == "every"
    source = Path(_check.__file__).read_text() + (
        "\n\n_drawn, _pinned = _draw, []\n\n\n"
        "def _draw(text, value):  # pinned by tests/replay/sandbox/test_honest_failures.py\n"
        "    if isinstance(value, int) and not isinstance(value, bool) and "
        f"({every} or not _pinned):\n"
        "        _pinned.append(value)\n        return '6'\n"
        "    return _drawn(text, value)\n")
    path = tmp_path / "engram_check.py"
    path.write_text(source)
    monkeypatch.setattr("replay.sandbox.sandbox.CHECK", path)
    return request.param


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from pkg.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    return root


def test_the_sandbox_copies_the_pinned_check(pinned):
    with Sandbox(limits=LIMITS) as box:
        assert "return '6'" in (box.root / "guard" / "engram_check.py").read_text()


def test_wrong_code_with_the_checks_value_fails_its_pytest_run_unforged(pinned, repo):
    result = pytest_run(repo, TRIPLE)
    assert result.check == "literal"
    assert not result.forged and not result.ok
    assert result.failed == {NODE} and result.passed == frozenset()
    right = pytest_run(repo, "def double(x):\n    return x * 2\n")
    assert right.ok and not right.forged


def test_wrong_code_with_the_checks_value_fails_its_asserts_run_unforged(pinned):
    with Sandbox(limits=LIMITS) as box:
        result = box.asserts(TRIPLE.replace("double", "f"), ASSERTS)
    assert result.check == "literal"
    assert not result.forged and result.passed == {"1"}  # f(0) == 0: that group passes


@pytest.mark.parametrize("forgery", [CALL_THE_PLUGIN, PATCHED_HOOK],
                         ids=["plugin hook", "TestReport"])
def test_forgeries_stay_forged_under_the_pin(pinned, repo, forgery):
    """The plugin hook: made-up pass reports, then the real ones fail; a pass for the check
    with a pass for its original is forged, whatever the re-check."""
    result = pytest_run(repo, forgery + TRIPLE)
    assert result.forged and not result.ok and result.passed == frozenset()


def test_a_stolen_token_stays_forged_under_the_pin(pinned):
    with Sandbox(limits=LIMITS) as box:
        result = box.asserts(TOKEN_FROM_FRAMES + TRIPLE.replace("double", "f"), ASSERTS)
    assert result.forged and result.passed == frozenset()
