"""Copied into the sandbox as ``engram_check.py`` and loaded by the runner alone: the
run's check test, a real test of the run with one expected value changed, so that code
can tell it from the real ones only by knowing the right answer.

- asserts (``assert_check``): one of the run's own assert groups with one literal of a
  comparison changed (``assert f(2) == 4`` becomes ``assert f(2) == 7``); the runner
  runs it at a random place before the group it copies.
- pytest (``pytest_check``): a copy of one of the targets' own tests, put beside it in its
  file with one literal of an assert changed. Both are renamed alike (``test_total``
  becomes ``test_total_basic`` and ``test_total_value``, which is which drawn at
  random), so neither name, place nor text says which is the original; the copy runs in
  a process of its own shaped like its original's (the same node id form; a file or
  class target deselecting the other twin).

The changed literal is the expected side of an ``assert X == literal`` (or of
``self.assertEqual``) at the top level of the test, before anything that could return
early: a test that passes ran it, so its copy fails for any code that passes the
original. Numbers move by 1 to 9, strings gain a letter, booleans flip. Where no test
has one: the negation of a top-level ``assert X``; where none has that either, a
constant ``assert a == b`` in a file of its own (code can tell that one by its text).

The twin only shows a forgery when its original is not failed honestly: wrong code may
compute the twin's value (``double`` as ``x * 3`` gives 6, the twin of ``== 4`` may
expect 6), and fails ``assert X`` exactly when it passes ``assert not (X)``. So each
check comes with its re-check, the same test with the same literal moved once more (to
a third value), or, where there is none (a boolean, a negated test), put back: code
whose original failed honestly fails it too, the runner's tie-breaker (see
``_runner.py``). Stdlib only; ``below`` draws from ``os.urandom``. Never imports the
tested code.
"""

import ast
import io
import os
import re
from pathlib import Path

WORDS = ("basic", "case", "value", "result", "simple", "example", "default", "again",
         "input", "output", "common", "plain", "typical", "usual", "known", "given")
_EQUAL = ("assertEqual", "assertEquals")


def below(k):
    """A random int in [0, k) from os.urandom (random and secrets cost start-up time)."""
    return int.from_bytes(os.urandom(8), "big") % k


def _pure(node):
    """Whether ``node`` is a literal display (an expected value, not a computed one)."""
    if isinstance(node, ast.Constant):
        return node.value is not None and node.value is not Ellipsis \
            and not isinstance(node.value, complex)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and \
            isinstance(node.operand.value, (int, float)) and \
            not isinstance(node.operand.value, bool)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_pure(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(k is not None for k in node.keys) \
            and all(_pure(v) for v in node.values)
    return False


def _constants(node):
    """The constants of a literal display that an expected value is made of."""
    if isinstance(node, ast.Constant):
        return [node]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Dict):
        return [c for v in node.values for c in _constants(v)]
    return [c for e in node.elts for c in _constants(e)]


def _returns(stmt):
    return any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt))


def _expected(stmts):
    """(literal constants, bare asserts) of the top-level statements that run whenever the
    test passes: the expected sides of ``assert X == literal`` and ``self.assertEqual``."""
    literals, bare = [], []
    for stmt in stmts:
        if _returns(stmt):
            break
        sides = []
        if isinstance(stmt, ast.Assert):
            test = stmt.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 \
                    and isinstance(test.ops[0], ast.Eq):
                sides = [test.left, test.comparators[0]]
            bare.append(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Attribute) and \
                stmt.value.func.attr in _EQUAL and len(stmt.value.args) >= 2:
            sides = stmt.value.args[:2]
        for side in sides:
            if _pure(side) and not all(_pure(s) for s in sides):
                literals += _constants(side)
    return literals, bare


def _offset(lines, lineno, col):
    """Character offset of (1-based line, UTF-8 byte column) in the joined ``lines``."""
    return sum(len(x) for x in lines[:lineno - 1]) + \
        len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", "replace"))


def _lines(text):
    """``text`` cut into lines with their ends where Python's parser cuts them: at "\\n",
    "\\r\\n" and "\\r" only (``str.splitlines`` also cuts at a form feed and other
    separators, and line numbers from ``ast`` would then point one line off)."""
    return io.StringIO(text, newline="").readlines()


def _segment(source, node):
    lines = _lines(source)
    return (_offset(lines, node.lineno, node.col_offset),
            _offset(lines, node.end_lineno, node.end_col_offset))


def _changed(text, value, taken=None):
    """The source of a literal like ``text`` whose value differs from ``value`` (and from
    ``taken``'s, the source of a first change), or None."""
    for _ in range(32):  # a few draws: a third value differing from two
        new = _draw(text, value)
        if new is None or taken is None:
            return new
        if ast.literal_eval(new) != ast.literal_eval(taken):
            return new
    return None


def _draw(text, value):
    if isinstance(value, bool):
        new = "False" if value else "True"
    elif isinstance(value, int):
        step = 1 + below(9)
        new = str(value - step if value - step >= 0 and below(2) else value + step)
    elif isinstance(value, float):
        new = repr(value + 1 + below(9))
    elif isinstance(value, (str, bytes)):
        quote = next((q for q in ('"""', "'''", '"', "'") if text.endswith(q)), None)
        if quote is None:
            return None
        letter = "abcdefghijklmnopqrstuvwxyz"[below(26)]
        new = text[:-len(quote)] + letter + quote
    else:
        return None
    try:
        found = ast.literal_eval(new)
    except (ValueError, SyntaxError):
        return None
    return new if type(found) is type(value) and found != value else None


def _mutation(source, literals, bare):
    """``source`` with one of ``literals`` changed (at random), else one of ``bare``'s
    tests negated: (new source, kind, the re-check's source: the same literal moved to a
    third value, else ``source`` itself), or None."""
    order = sorted(literals, key=lambda n: (isinstance(n.value, bool), below(1 << 30)))
    for node in order:
        start, end = _segment(source, node)
        new = _changed(source[start:end], node.value)
        if new is not None:
            again = _changed(source[start:end], node.value, new) or source[start:end]
            return (source[:start] + new + source[end:], "literal",
                    source[:start] + again + source[end:])
    if bare:
        test = bare[below(len(bare))].test
        start, end = _segment(source, test)
        return f"{source[:start]}not ({source[start:end]}){source[end:]}", "negated", source
    return None


def assert_check(tests):
    """(index of the group copied, the check's text, kind, the re-check's text) for an
    asserts run; the index (and the re-check) is None for the constant check."""
    found = []
    for index, group in enumerate(tests):
        try:
            tree = ast.parse(group)
        except (SyntaxError, ValueError):
            continue
        literals, bare = _expected(tree.body)
        if literals or bare:
            found.append((bool(literals), below(1 << 30), index, literals, bare))
    for _, _, index, literals, bare in sorted(found, reverse=True):
        made = _mutation(tests[index], literals, bare)
        if made is not None:
            return index, made[0], made[1], made[2]
    a = 2 + below(10**6)
    return None, f"assert {a} == {a + 1 + below(10**6)}", "constant", None


# -- pytest ----------------------------------------------------------------------------
def _tests_in(body, classes):
    """(classes, function) of every test function under ``body``."""
    out = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.startswith("test"):
            out.append((classes, node))
        elif isinstance(node, ast.ClassDef):
            out += _tests_in(node.body, [*classes, node.name])
    return out


def _scope(tree, parts):
    """The test functions a target's node id parts (``Class``, ``test``) name."""
    body, classes = tree.body, []
    for depth, name in enumerate(parts):
        node = next((n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                                                       ast.AsyncFunctionDef))
                     and n.name == name), None)
        if node is None:
            return []
        if isinstance(node, ast.ClassDef):
            body, classes = node.body, [*classes, name]
        elif depth == len(parts) - 1:
            return [(classes, node)]
        else:
            return []
    return _tests_in(body, classes)


def _names(tree):
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef,
                                                            ast.ClassDef))}


def _two_words(name, taken):
    """Two suffixes for ``name``'s twins that no name of the file starts with (a word;
    when the file took nearly every word, the word with a number, both alike)."""
    n = 0
    while True:
        free = [w + (str(n) if n else "") for w in WORDS]
        free = [w for w in free if not any(t.startswith(f"{name}_{w}") for t in taken)]
        if len(free) >= 2:
            break
        n += 1
    first = free.pop(below(len(free)))
    return first, free[below(len(free))]


def _rstrip_blank(lines):
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _renamed(line, name, new):
    return re.sub(rf"(\bdef\s+){re.escape(name)}\b", rf"\g<1>{new}", line, count=1)


def inside(root, path):
    """Whether ``path`` is ``root`` or under it, both resolved (a prefix of the text is not:
    ``/work2`` is not inside ``/work``)."""
    return Path(path).resolve().is_relative_to(Path(root).resolve())


def _beside(place, text, original, copy):
    """The test file with the original test (renamed ``original``) and its twin from
    ``text``, the file with one literal changed (renamed ``copy``), side by side in the
    order drawn for the run."""
    lines, start, at, end, name, gap, mine_first = place
    changed = _lines(text)
    mine = [*lines[start:at], _renamed(lines[at], name, original), *lines[at + 1:end]]
    twin = [*changed[start:at], _renamed(changed[at], name, copy), *changed[at + 1:end]]
    for block in (mine, twin):
        if block and not block[-1].endswith("\n"):
            block[-1] += "\n"
    pair = [*mine, *gap, *twin] if mine_first else [*twin, *gap, *mine]
    return "".join([*lines[:start], *pair, *lines[end:]])


def pytest_check(targets, root):
    """The check for a pytest run over ``targets`` (node ids under ``root``): a dict with
    the test file to write (``file``, ``source``; ``recheck``, the same with the re-check
    as the twin), the original test's node id (``name``), its new one (``original``) and
    the copy's (``check``), the parameter id of the target it came from (``suffix``),
    which target (``target``) and ``kind``; None when no target's tests have an assert to
    change."""
    found = []
    for index, target in enumerate(targets):
        rel, *parts = target.split("::")
        path = os.path.join(root, rel)
        if not rel.endswith(".py") or not inside(root, path) or not os.path.isfile(path):
            continue
        suffix = ""
        if parts and "[" in parts[-1]:
            parts[-1], bracket, rest = parts[-1].partition("[")
            suffix = bracket + rest
        try:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            tree = ast.parse(source)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            continue
        for classes, func in _scope(tree, parts):
            literals, bare = _expected(func.body)
            if literals or bare:
                found.append((bool(literals), below(1 << 30), index, rel, suffix, source,
                              tree, classes, func, literals, bare))
    for entry in sorted(found, key=lambda e: (e[0], e[1]), reverse=True):
        index, rel, suffix, source, tree, classes, func, literals, bare = entry[2:]
        made = _mutation(source, literals, bare)
        if made is None:
            continue
        mutated, kind, again = made
        lines = _lines(source)
        start = min([func.lineno, *(d.lineno for d in func.decorator_list)]) - 1
        first, second = _two_words(func.name, _names(tree))
        original, copy = f"{func.name}_{first}", f"{func.name}_{second}"
        gap = ["\n"] * max(1, len(lines[:start]) - len(_rstrip_blank(lines[:start])))
        place = (lines, start, func.lineno - 1, func.end_lineno, func.name, gap, below(2))
        prefix = "::".join([rel, *classes])
        return {"file": rel, "source": _beside(place, mutated, original, copy),
                "recheck": _beside(place, again, original, copy),
                "name": f"{prefix}::{func.name}", "original": f"{prefix}::{original}",
                "check": f"{prefix}::{copy}", "suffix": suffix, "target": index,
                "kind": kind}
    return None


def covers(target, node):
    target = target.rstrip("/")
    return node == target or node.startswith((target + "::", target + "[", target + "/"))


def is_test(test, node):
    """Whether ``node`` is (a parameter of) the test function ``test``."""
    return node == test or node.startswith(test + "[")


def argv(target, plan, check):
    """The node ids (and ``--deselect``) of one child: a target's (``check`` False) or the
    check's (``check`` True, ``target`` the one the check came from), alike in form."""
    mine, other = (plan["check"], plan["original"]) if check else \
        (plan["original"], plan["check"])
    if is_test(plan["name"], target):
        return [mine + target[len(plan["name"]):]]
    if covers(target, plan["name"]):
        return [target, "--deselect", other]
    return [target]


def as_reported(node, plan):
    """A node id a target's child reported, with the original test's own name back."""
    if plan is not None and is_test(plan["original"], node):
        return plan["name"] + node[len(plan["original"]):]
    return node
