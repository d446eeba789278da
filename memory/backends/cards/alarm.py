"""The regression alarm of ``cards``: code the assistant wrote that breaks what the
developer stated about that function, or brings back what a revision removed.

CodeMem's AST conflict check compares new code with the code written before; this one
compares it with the graph's facts about the function, where the fact says something
an AST can check:
- "`f` takes (a, b)": the parameters, in order;
- "`f` needs / should reuse / uses / calls `x`": ``x`` is referenced;
- "`f` raises X ..." / "never raises X": ``raise X`` is there, or is not;
- a superseded "`f` takes (...)" whose parameters the new code has again, while the
  current statement differs: the revision was undone.
A fact that the code breaks is marked (``Node.alarm``): its card is raised first and
says why, until code for the function that respects it is written. Code that does not
parse, or that does not define the function, raises nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from memory.backends.cards import params
from memory.backends.cards.graph import ContextGraph, Node, subject_key
from memory.backends.cards.rules import (
    ALARM_NEVER,
    ALARM_RAISES,
    ALARM_TAKES,
    ALARM_USES,
)


@dataclass(frozen=True)
class Alarm:
    fact: Node
    why: str


@dataclass
class _Shape:
    params: list[str]
    names: set[str]
    raised: set[str]


def _names(args: ast.arguments) -> list[str]:
    """A signature's parameters in order, ``*args`` and ``**kwargs`` marked; the bare
    ``*`` and ``/`` markers are no parameters."""
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    params += [f"*{args.vararg.arg}"] if args.vararg else []
    params += [a.arg for a in args.kwonlyargs]
    params += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return params


def _shape(code: str, name: str) -> _Shape | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    wanted = name.split(".")[-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == wanted:
            params = _names(node.args)
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            raised = set()
            for r in (n for n in ast.walk(node) if isinstance(n, ast.Raise) and n.exc):
                target = r.exc.func if isinstance(r.exc, ast.Call) else r.exc
                if isinstance(target, ast.Name):
                    raised.add(target.id)
                elif isinstance(target, ast.Attribute):
                    raised.add(target.attr)
            return _Shape(params, names, raised)
    return None


def _stated(text: str) -> list[str] | None:
    """The parameters a statement says its function takes ("`f` takes (a, b: int = 0).",
    the form the reading gives any phrasing of it), as ``_shape`` lists a ``def``'s:
    annotations, defaults and nested brackets kept out of the names; None when it states
    no parameter list."""
    found = ALARM_TAKES.search(text)
    if found is None:
        return None
    listed = next(params.spans(text[found.end() - 1:]), None)
    if listed is None or listed[0] != 0:
        return None
    shown = params.parameters(listed[2])
    if shown is None:
        return None
    (func,) = ast.parse(f"def _{shown}: pass").body
    assert isinstance(func, ast.FunctionDef)
    return _names(func.args)


def check(graph: ContextGraph, code: Node) -> list[Alarm]:
    """The facts about ``code``'s function that ``code`` breaks."""
    key = subject_key(code.subject)
    shape = _shape(code.content, code.subject) if key else None
    if shape is None:
        return []
    facts = [n for n in graph.of_type("fact") if subject_key(n.subject) == key]
    current = [n for n in facts if n.current]
    alarms: list[Alarm] = []
    where = f"the code written at turn {code.turn}"
    for fact in current:
        text = fact.statement
        if (stated := _stated(text)) is not None and stated != shape.params:
            alarms.append(Alarm(fact, f"{where} takes ({', '.join(shape.params)})"))
            revived = [old for old in facts if not old.current
                       and _stated(old.statement) == shape.params]
            if revived:
                alarms[-1] = Alarm(fact, alarms[-1].why + f", as {revived[-1].source} said "
                                   f"before this revision")
        elif (m := ALARM_USES.search(text)) and m.group(1).split(".")[-1] not in shape.names:
            alarms.append(Alarm(fact, f"{where} does not use `{m.group(1)}`"))
        elif (m := ALARM_NEVER.search(text)) and m.group(1) in shape.raised:
            alarms.append(Alarm(fact, f"{where} raises {m.group(1)}"))
        elif not ALARM_NEVER.search(text) and (m := ALARM_RAISES.search(text)) and \
                m.group(1) not in shape.raised:
            alarms.append(Alarm(fact, f"{where} never raises {m.group(1)}"))
    return alarms


def update(graph: ContextGraph, code: Node) -> tuple[list[Alarm], list[Node]]:
    """Mark the facts ``code`` breaks; clear the alarms of the facts about the same
    function it respects. Returns (raised, cleared)."""
    key = subject_key(code.subject)
    if not key or _shape(code.content, code.subject) is None:
        return [], []
    raised = check(graph, code)
    broken = {a.fact.id for a in raised}
    cleared = []
    for fact in graph.of_type("fact"):
        if subject_key(fact.subject) == key and fact.alarm and fact.id not in broken:
            fact.alarm = ""
            cleared.append(fact)
    for alarm in raised:
        alarm.fact.alarm = alarm.why
    return raised, cleared
