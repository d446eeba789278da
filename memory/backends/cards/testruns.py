"""Test runs read from a command's output: which runner, the counts, the failed tests
with their first error line, the tests named as passing, whether the run stopped early,
and what part of the suite the command asked for (its scope).

Two families of output are read, whatever the project: pytest's (the final counts line
``2 failed, 40 passed in 1.20s``, the short summary's ``FAILED id - message`` and
``ERROR id`` lines, verbose ``id PASSED`` lines, and the failure sections whose first
``E`` line is the error) and unittest's (``Ran N tests``, ``OK`` / ``FAILED (failures=1,
errors=2)``, the ``FAIL: name (id)`` blocks whose traceback ends in the error). An
output holding neither counts line is no test run (``parse`` gives None): a file read or
a grep that merely quotes such lines has them prefixed by a line number or a path.

A command's scope is the paths or test ids it names after the runner (none: the whole
suite); a selection by expression (``-k``, ``-m``, ``--lf``...) covers only the tests
the output itself names. ``covers`` says whether a test id lies inside a scope.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from memory.backends.cards.rules import (
    EXCEPTION_LINE,
    PYTEST_COUNT,
    PYTEST_COUNTS,
    PYTEST_E_LINE,
    PYTEST_RULE,
    PYTEST_SECTION,
    PYTEST_SELECTING,
    PYTEST_STOPPED,
    PYTEST_STOPPING,
    PYTEST_SUMMARY_LINE,
    PYTEST_VALUED,
    PYTEST_VERBOSE,
    SHELL_JOINS,
    SHELLS,
    TEST_RUNNERS,
    UNITTEST_HEADER,
    UNITTEST_RAN,
    UNITTEST_RESULT,
    UNITTEST_RULE,
    UNITTEST_VERBOSE,
)

ERROR_CHARS = 200  # of an error line kept


@dataclass(frozen=True)
class TestFailure:
    """One test that did not pass: its id as the runner names it, its first error line,
    and whether it failed (an assertion) or errored (setup, collection, an exception)."""

    test: str
    error: str
    kind: str = "failed"  # failed | error


@dataclass(frozen=True)
class Scope:
    """What a command asked to run: the paths or test ids it named (none: everything),
    and whether it selected tests by an expression (then only the named ones count)."""

    paths: tuple[str, ...] = ()
    selecting: bool = False
    stops: bool = field(default=False, compare=False)  # at the first failures (-x, ...)

    def covers(self, test: str) -> bool:
        """Whether a run of this scope, had it completed, would have run ``test``."""
        if self.selecting:
            return False
        if not self.paths:
            return True
        return any(_inside(test, path) for path in self.paths)

    def includes(self, other: Scope) -> bool:
        """Whether this scope runs at least everything ``other`` runs."""
        if self.selecting or other.selecting:
            return self == other
        if not self.paths:
            return True
        return bool(other.paths) and all(any(_inside(p, q) for q in self.paths)
                                         for p in other.paths)

    def label(self) -> str:
        return ", ".join(self.paths) if self.paths else "the whole suite"


@dataclass
class TestRun:
    """What a test run's output says."""

    runner: str  # pytest | unittest
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[TestFailure] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)  # tests the output names as passing
    stopped: bool = False  # it ended before running every test it was asked to

    @property
    def ok(self) -> bool:
        return not self.failures and not self.counts.get("failed") \
            and not self.counts.get("errors")

    @property
    def ran(self) -> int:
        return sum(n for key, n in self.counts.items() if key != "deselected")

    def summary(self) -> str:
        order = ("failed", "errors", "passed", "skipped", "xfailed", "xpassed", "deselected")
        parts = [f"{self.counts[k]} {k}" for k in order if self.counts.get(k)]
        text = ", ".join(parts) or "no tests ran"
        return text + (" (stopped early)" if self.stopped else "")


def parse(output: str) -> TestRun | None:
    """The test run an output shows (pytest's or unittest's), or None when it shows none."""
    counts = list(PYTEST_COUNTS.finditer(output))
    if counts:
        return _pytest(output, counts[-1])
    ran = list(UNITTEST_RAN.finditer(output))
    if ran:
        return _unittest(output, ran[-1])
    return None


def _error(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS - 3] + "..."


def _sections(output: str) -> dict[str, str]:
    """pytest's failure and error sections by their heading (``test_a``,
    ``TestA.test_a[1]``, ``ERROR at setup of test_a``, ``ERROR collecting path``)."""
    found: dict[str, str] = {}
    heads = list(PYTEST_SECTION.finditer(output))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(output)
        rule = PYTEST_RULE.search(output, head.end(), end)
        found.setdefault(head.group(1).strip(), output[head.end():rule.start() if rule
                                                        else end])
    return found


def _section_name(test: str, kind: str) -> list[str]:
    """The headings pytest gives the section of ``test``."""
    path, sep, rest = test.partition("::")
    if not sep:
        return [f"ERROR collecting {path}"]
    name = rest.replace("::", ".")
    return [name, f"ERROR at setup of {name}", f"ERROR at teardown of {name}"] \
        if kind == "error" else [name]


def _first_error(body: str) -> str:
    match = PYTEST_E_LINE.search(body)
    if match:
        return match.group(1)
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    return next((ln for ln in lines if EXCEPTION_LINE.match(ln)), lines[-1] if lines else "")


def _pytest(output: str, line: re.Match[str]) -> TestRun:
    run = TestRun("pytest")
    for number, key in PYTEST_COUNT.findall(line.group("body")):
        key = "errors" if key.startswith("error") else key
        run.counts[key] = run.counts.get(key, 0) + int(number)
    sections = _sections(output)
    seen: set[str] = set()
    named = [(m.group(1), m.group(2), m.group(3) or "")
             for m in PYTEST_SUMMARY_LINE.finditer(output)]
    named += [(m.group(2), m.group(1), "") for m in PYTEST_VERBOSE.finditer(output)]
    for status, test, message in named:
        if status in ("PASSED", "XPASS"):
            if test not in run.passed:
                run.passed.append(test)
            continue
        if test in seen:
            continue
        seen.add(test)
        kind = "error" if status == "ERROR" else "failed"
        body = next((sections[n] for n in _section_name(test, kind) if n in sections), "")
        error = _first_error(body) if body else ""
        run.failures.append(TestFailure(test, _error(error or message or status.lower()), kind))
    run.stopped = bool(PYTEST_STOPPED.search(output))
    return run


def _unittest(output: str, ran: re.Match[str]) -> TestRun:
    run = TestRun("unittest")
    total = int(ran.group(1))
    result = UNITTEST_RESULT.search(output, ran.end())
    told: dict[str, int] = {}
    if result is not None and result.group(2):
        for part in result.group(2).split(","):
            key, _, value = part.strip().partition("=")
            if value.strip().isdigit():
                told[key.strip()] = int(value)
    blocks = list(UNITTEST_HEADER.finditer(output))
    for i, head in enumerate(blocks):
        kind_word, name, where = head.groups()
        test = where if where.endswith(f".{name}") else f"{where}.{name}"
        end = blocks[i + 1].start() if i + 1 < len(blocks) else ran.start()
        rule = UNITTEST_RULE.search(output, head.end(), end)
        body = output[rule.end():end] if rule is not None else output[head.end():end]
        if any(f.test == test for f in run.failures):
            continue
        run.failures.append(TestFailure(test, _error(_traceback_error(body) or kind_word.lower()),
                                        "error" if kind_word == "ERROR" else "failed"))
    for name, where, status in UNITTEST_VERBOSE.findall(output):
        test = where if where.endswith(f".{name}") else f"{where}.{name}"
        if status == "ok" and test not in run.passed:
            run.passed.append(test)
    failed = told.get("failures", 0) + told.get("unexpected successes", 0)
    errors = told.get("errors", 0)
    skipped = told.get("skipped", 0)
    expected = told.get("expected failures", 0)
    run.counts = {"failed": failed, "errors": errors, "skipped": skipped, "xfailed": expected,
                  "passed": max(0, total - failed - errors - skipped - expected)}
    run.counts = {k: v for k, v in run.counts.items() if v}
    return run


def _traceback_error(body: str) -> str:
    """The exception line of a traceback (the first line after the frames)."""
    lines = body.splitlines()
    inside = False
    for line in lines:
        if line.startswith("Traceback (most recent call last)"):
            inside = True
            continue
        if inside and line and not line[0].isspace():
            return line.strip()
    return next((ln.strip() for ln in lines if EXCEPTION_LINE.match(ln.strip())), "")


def _inside(test: str, path: str) -> bool:
    """Whether ``test`` (a pytest id, a path, or a dotted unittest id) lies in ``path``."""
    if test == path:
        return True
    return test.startswith((f"{path}::", f"{path}/", f"{path}."))


def _words(command: str) -> list[str]:
    """The command's words; the line a shell is given with ``-c`` (``sh -c '...'``)
    counts with its own words. Other quoted words stay whole: the expression of
    ``-k "a and b"`` is one option value, not paths."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    flat: list[str] = []
    for i, word in enumerate(words):
        inner = i >= 2 and words[i - 1] in ("-c", "-lc") \
            and words[i - 2].rsplit("/", 1)[-1] in SHELLS
        flat += _words(word) if inner else [word]
    return flat


def _clean(path: str) -> str:
    path = path[2:] if path.startswith("./") else path
    return path.rstrip("/") or path


def scope(command: str) -> Scope:
    """What ``command`` asks to run (see the module's docstring)."""
    words = _words(command)
    start = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in TEST_RUNNERS
                  or (w == "test" and i and words[i - 1].endswith("manage.py"))), None)
    if start is None:
        return Scope()
    paths: list[str] = []
    selecting = stops = False
    skip = False
    for word in words[start + 1:]:
        if word in SHELL_JOINS:
            break
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            selecting = selecting or option in PYTEST_SELECTING
            stops = stops or bool(PYTEST_STOPPING.match(word))
            skip = option in PYTEST_VALUED and "=" not in word
            continue
        if word in ("discover", "-m"):
            continue
        paths.append(_clean(word))
    return Scope(tuple(dict.fromkeys(paths)), selecting, stops)
