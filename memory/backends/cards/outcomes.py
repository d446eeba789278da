"""Test results from a turn's tool calls, as units of the ``cards`` graph.

Every call of a turn's tool loop (``memory.acting.tools.trajectory.trail``) that ran a command
(the ``run`` tool, or any tool called with a ``command``: a recorded session's shell)
and whose output is a test run (``testruns.parse``: pytest or unittest, whatever the
command) becomes a
``tests`` unit (the command, its scope, the counts, the failing tests) and one
``failure`` unit per failed test (its id and first error line), tied to the test's
definition when the repository has it.

A later run revises what it makes out of date, so only the newest outcome is current:
- a failure whose test fails again is revised by the new failure (its latest error);
- a failure whose test the later run names as passing, or lies in its scope while the
  run completed (it did not stop at a first failure), is revised by the later run's
  ``tests`` unit, which says the test passes now;
- an earlier ``tests`` unit whose scope the later run includes is revised by it (a run
  that stopped early revises only the same scope).
No model and no cue words: what the runner printed decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory.acting.tools.trajectory import Call, trail
from memory.backends.cards import testruns
from memory.backends.cards.graph import ContextGraph, Node
from memory.listing import listed
from memory.types import Turn

Count = Callable[[str], int]
Resolve = Callable[[str], "tuple[str, str, str] | None"]
Symbol = Callable[[str], "Node | None"]
SHOWN_FAILURES = 5  # failing tests named in a run's unit


@dataclass
class Outcome:
    """What one turn's test runs added to the graph and what they revised."""

    added: list[Node] = field(default_factory=list)
    superseded: list[tuple[Node, Node]] = field(default_factory=list)  # (new, old)


def command_of(call: Call) -> str:
    """The command a call ran: the ``$ argv`` line the run tool prints, else its
    ``command`` argument, else the call itself."""
    first = call.output.lstrip().split("\n", 1)[0]
    if first.startswith("$ "):
        return first[2:].strip()
    for key in ("command", "cmd"):
        if isinstance(call.args.get(key), str) and call.args[key].strip():
            return call.args[key].strip()
    return call.line


def ran_a_command(call: Call) -> bool:
    """Whether a call ran a command (a file read or a search only shows text)."""
    return call.function == "run" or any(isinstance(call.args.get(k), str | list)
                                         for k in ("command", "cmd"))


def test_location(test: str) -> str:
    """``path::Class::name[param]`` -> ``path::Class.name``; a unittest id stays as it is."""
    path, sep, rest = test.partition("::")
    if not sep:
        return test
    return f"{path}::{rest.split('[', 1)[0].replace('::', '.')}"


class TestOutcomes:
    """The tests failing now and the current runs, across the turns of a session."""

    def __init__(self, graph: ContextGraph, resolve: Resolve, symbol: Symbol,
                 count: Count) -> None:
        self.graph, self.resolve, self.symbol, self.count = graph, resolve, symbol, count
        self.failing: dict[str, str] = {}  # test id -> its current failure unit
        self.scopes: dict[str, testruns.Scope] = {}  # current tests unit -> its scope

    def add_turn(self, turn: Turn) -> Outcome:
        outcome = Outcome()
        for step, call in enumerate(trail(turn), 1):
            if not ran_a_command(call):
                continue
            run = testruns.parse(call.output)
            if run is not None:
                self._add_run(turn, step, command_of(call), run, outcome)
        return outcome

    def _add_run(self, turn: Turn, step: int, command: str, run: testruns.TestRun,
                 outcome: Outcome) -> None:
        scope = testruns.scope(command)
        stopped = run.stopped or (scope.stops and not run.ok)
        failures = [self._failure(turn, step, n, command, f)
                    for n, f in enumerate(run.failures)]
        by_test = {f.test: node for f, node in zip(run.failures, failures, strict=True)}
        fixed: list[tuple[str, Node]] = []  # (test, its failure unit) that passes now
        for test, node_id in list(self.failing.items()):
            old = self.graph.nodes.get(node_id)
            if old is None or not old.current:
                del self.failing[test]
                continue
            if test in by_test:
                outcome.superseded.append((by_test[test], old))
            elif test in run.passed or (not stopped and run.ran and scope.covers(test)):
                fixed.append((test, old))
                del self.failing[test]
        unit = self._run_unit(turn, step, command, scope, run, stopped, fixed)
        self.graph.add(unit)
        outcome.added.append(unit)
        for node in failures:
            self.graph.add(node)
            outcome.added.append(node)
            for location in node.locations:
                symbol = self.symbol(location)
                if symbol is not None:
                    self.graph.link(node.id, symbol.id, "contains")
        self.failing.update({test: node.id for test, node in by_test.items()})
        outcome.superseded += [(unit, old) for _, old in fixed]
        for old_id, old_scope in list(self.scopes.items()):
            old = self.graph.nodes.get(old_id)
            if old is None or not old.current:
                del self.scopes[old_id]
            elif old_scope == scope or (not stopped and scope.includes(old_scope)):
                outcome.superseded.append((unit, old))
                del self.scopes[old_id]
        self.scopes[unit.id] = scope
        for new, old in outcome.superseded:
            if old.current:
                self.graph.supersede(new, old, 1.0)
        for node in failures:
            self.graph.link(node.id, unit.id, "task")

    def _failure(self, turn: Turn, step: int, n: int, command: str,
                 failure: testruns.TestFailure) -> Node:
        what = "errored" if failure.kind == "error" else "failed"
        content = f"test {failure.test} {what}: {failure.error} (`{command}`, turn {turn.index})"
        location = test_location(failure.test)
        hit = self.resolve(location)
        found = hit[0] if hit is not None and hit[0] == location else ""  # the test's code
        tokens = self.count(content)
        return Node(f"fail:{turn.index}:run{step}:{n}", "failure", f"turn:{turn.index}",
                    content, tokens, 1.0, found or failure.test, [found] if found else [],
                    turn.index, tokens)

    def _run_unit(self, turn: Turn, step: int, command: str, scope: testruns.Scope,
                  run: testruns.TestRun, stopped: bool, fixed: list[tuple[str, Node]]) -> Node:
        early = " (stopped at the first failure)" if stopped and not run.stopped else ""
        parts = [f"tests `{command}` ({scope.label()}) at turn {turn.index}: "
                 f"{run.summary()}{early}."]
        if run.failures:
            shown = listed([f"{f.test} ({f.error})" for f in run.failures], SHOWN_FAILURES, "; ")
            parts.append(f"Failing: {shown}.")
        if fixed:
            parts.append("Passing now: " + ", ".join(
                f"{test} (failed at turn {old.turn})" for test, old in fixed) + ".")
        elif run.ok and not stopped:
            parts.append("Every test it ran passed.")
        content = " ".join(parts)
        tokens = self.count(content)
        return Node(f"tests:{turn.index}:{step}", "tests", f"turn:{turn.index}", content,
                    tokens, 1.0, scope.label() if scope.paths else "", [], turn.index, tokens)
