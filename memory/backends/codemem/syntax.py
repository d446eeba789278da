"""Python code analysis for CodeMem, with tree-sitter (partial code degrades gracefully).

- ``code_blocks``: the fenced Python blocks of an answer (or the answer, if it is code).
- ``statement_blocks``: statement-level nodes of a function (definitions, if, for,
  while, with, try, assignments, return, raise, imports), comments stripped,
  overlapping spans merged, each normalised to one line of text.
- ``ast_diff``: added and removed statement blocks between two versions.
- ``calls`` / ``defines``: the APIs a piece of code calls and the names it defines.
- ``external_calls``: what generated code calls from the repository, builtins left
  out (CodeMem's AST selector keeps the blocks whose APIs meet it).
"""

from __future__ import annotations

import builtins
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from memory.fences import blocks
from memory.index.chunks import _parser

STATEMENTS = frozenset({
    "function_definition", "class_definition", "decorated_definition", "if_statement",
    "for_statement", "while_statement", "with_statement", "try_statement",
    "assignment", "augmented_assignment", "return_statement", "raise_statement",
    "import_statement", "import_from_statement",
})
PYTHON_INFOS = ("", "python", "py", "python3")  # a block's info string, casefolded


def code_blocks(answer: str) -> list[str]:
    """Python code in a model's answer: fenced blocks (CommonMark's fences: a docstring's
    own fenced examples stay in their block), else the answer if it parses as code."""
    fenced = [b.text.strip("\n") for b in blocks(answer) if b.info.casefold() in PYTHON_INFOS]
    if fenced:
        return fenced
    tree = _parser().parse(answer.encode())
    if answer.strip() and not tree.root_node.has_error and re.search(r"^\s*(def|class) ",
                                                                     answer, re.M):
        return [answer]
    return []


def _walk(node: Any) -> Any:
    yield node
    for child in node.children:
        yield from _walk(child)


def _without_comments(source: bytes, start: int, end: int, comments: list[Any]) -> str:
    parts: list[bytes] = []
    cursor = start
    for comment in comments:
        if start <= comment.start_byte and comment.end_byte <= end:
            parts.append(source[cursor:comment.start_byte])
            cursor = comment.end_byte
    parts.append(source[cursor:end])
    return " ".join(b"".join(parts).decode("utf-8", "replace").split())


def _target_body(root: Any, name: str | None) -> Any:
    """The body of function ``name`` (or of the first function), else the module."""
    for node in _walk(root):
        if node.type == "function_definition":
            found = node.child_by_field_name("name")
            if name is None or (found is not None and found.text.decode() == name):
                return node.child_by_field_name("body") or node
    return root


def _blocks_in(body: Any, source: bytes) -> list[str]:
    spans: list[tuple[int, int]] = []
    for node in _walk(body):
        if node is body or node.type not in STATEMENTS:
            continue
        if node.type in ("assignment", "augmented_assignment"):
            # the statement around an assignment, so ``x = 1`` is one block
            node = node.parent if node.parent is not None else node
        spans.append((node.start_byte, node.end_byte))
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:  # overlaps the previous block: merge
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    comments = [n for n in _walk(body) if n.type == "comment"]
    blocks = [_without_comments(source, start, end, comments) for start, end in merged]
    return [b for b in blocks if b]


def statement_blocks(code: str, function: str | None = None) -> list[str]:
    """Normalised statement blocks of ``function``'s body (or the whole code).

    Code with syntax errors is cut into top-level statements by indentation; each
    statement that parses is analysed as usual, a broken one is kept as its text."""
    source = code.encode()
    root = _parser().parse(source).root_node
    if root.has_error:
        return _fallback_blocks(code, function)
    return _blocks_in(_target_body(root, function), source)


_KEYWORDS = re.compile(r"(if|elif|for|while|with|try|def|class|return|raise|import|from|async)\b")
_CONTINUES = re.compile(r"(else|elif|except|finally)\b|[)\]}]")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _body_lines(code: str, function: str | None) -> list[str]:
    lines = code.splitlines()
    name = re.escape(function) if function else r"\w+"
    start = next((i for i, line in enumerate(lines)
                  if re.match(rf"\s*(async\s+)?def\s+{name}\b", line)), None)
    if start is None:
        return lines
    base = _indent(lines[start])
    body = []
    for line in lines[start + 1:]:
        if line.strip() and _indent(line) <= base:
            break
        body.append(line)
    return body


def _fallback_blocks(code: str, function: str | None) -> list[str]:
    lines = [line for line in _body_lines(code, function)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return []
    base = min(_indent(line) for line in lines)
    groups: list[list[str]] = []
    for line in lines:
        top = _indent(line) == base and not _CONTINUES.match(line.lstrip())
        if top or not groups:
            groups.append([])
        groups[-1].append(line[base:] if _indent(line) >= base else line.lstrip())
    blocks: list[str] = []
    for group in groups:
        text = "\n".join(group)
        source = text.encode()
        root = _parser().parse(source).root_node
        if not root.has_error:
            blocks += _blocks_in(root, source)
        elif _KEYWORDS.match(text) or re.match(r"[\w.\[\], ]+\s*[-+*/|&]?=[^=]", text):
            blocks.append(" ".join(re.sub(r"#[^\n]*", "", text).split()))
    return blocks


@dataclass(frozen=True)
class Diff:
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.added and not self.removed


def ast_diff(old: str, new: str, function: str | None = None) -> Diff:
    """Statement blocks added and removed from ``old`` to ``new`` (as multisets)."""
    before = Counter(statement_blocks(old, function)) if old else Counter()
    after = Counter(statement_blocks(new, function))
    return Diff(tuple((after - before).elements()), tuple((before - after).elements()))


# -- API calls: what counts for CodeMem's selector --------------------------------------
# Builtins are not APIs of the repository: ``len``, ``ValueError`` called by name, and the
# methods of builtin types (``", ".join``, ``parts.append``, ``d.items``) must not make a
# block look related. The sets are derived from the interpreter, not typed by hand.
BUILTIN_TYPES: tuple[type, ...] = (str, bytes, bytearray, list, dict, set, frozenset, tuple,
                                   int, float)
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
BUILTIN_METHODS = frozenset(n for t in BUILTIN_TYPES for n in dir(t) if not n.startswith("_"))
_TYPE_NAMES = frozenset(t.__name__ for t in BUILTIN_TYPES) | {"sorted", "repr", "format"}
_STR_METHODS = frozenset(n for t in (str, bytes) for n in dir(t) if not n.startswith("_"))
_LITERALS = frozenset({
    "string", "concatenated_string", "integer", "float", "list", "dictionary", "set", "tuple",
    "list_comprehension", "dictionary_comprehension", "set_comprehension",
})


@dataclass(frozen=True)
class CallSite:
    name: str  # the called name (last attribute component)
    attribute: bool  # reached through an attribute (``x.name(...)``), not by bare name
    builtin_receiver: bool  # the receiver is surely a builtin value (literal, ``set()``...)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _builtin_value(node: Any, typed: set[str]) -> bool:
    """Whether ``node`` surely evaluates to a builtin-type value."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0] if node.named_children else None
    if node is None:
        return False
    if node.type in _LITERALS:
        return True
    if node.type == "identifier":
        return node.text.decode() in typed | _TYPE_NAMES  # ``str.join(...)`` too
    fn = node.child_by_field_name("function") if node.type == "call" else None
    if fn is not None and fn.type == "identifier":
        return fn.text.decode() in _TYPE_NAMES  # ``set()``, ``dict(rows)``, ``sorted(x)``
    if fn is not None and fn.type == "attribute":  # str/bytes methods return builtins
        name = fn.child_by_field_name("attribute")
        return (name is not None and name.text.decode() in _STR_METHODS
                and _builtin_value(fn.child_by_field_name("object"), typed))
    return False


def _builtin_typed_names(root: Any) -> set[str]:
    """Names whose every assignment in the code is a builtin value (``out = []``)."""
    values: dict[str, list[Any]] = {}
    for node in _walk(root):
        if node.type == "assignment":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.type == "identifier":
                values.setdefault(left.text.decode(), []).append(right)
        elif node.type in ("for_statement", "for_in_clause", "with_item", "augmented_assignment",
                           "parameters", "lambda_parameters"):
            for ident in _walk(node.child_by_field_name("left") or node):
                if ident.type == "identifier":  # bound otherwise: type unknown
                    values.setdefault(ident.text.decode(), []).append(None)
    typed: set[str] = set()
    changed = True
    while changed:  # ``a = []; b = a`` reaches b on the second pass
        changed = False
        for name, rights in values.items():
            if name not in typed and all(_builtin_value(r, typed) for r in rights):
                typed.add(name)
                changed = True
    return typed


def call_sites(code: str) -> list[CallSite]:
    """Every call in ``code``: the called name, how it was reached, what it was called on."""
    root = _parser().parse(code.encode()).root_node
    typed = _builtin_typed_names(root)
    sites: list[CallSite] = []
    for node in _walk(root):
        fn = node.child_by_field_name("function") if node.type == "call" else None
        if fn is None:
            continue
        if fn.type == "attribute":
            name = fn.child_by_field_name("attribute")
            receiver = fn.child_by_field_name("object")
            sites.append(CallSite((name or fn).text.decode("utf-8", "replace"), True,
                                  _builtin_value(receiver, typed)))
        else:
            sites.append(CallSite(fn.text.decode("utf-8", "replace"), False, False))
    return sites


def is_builtin(site: CallSite) -> bool:
    """A builtin by name (``len``), a dunder, or a builtin-type method (``x.append``)."""
    if _dunder(site.name) or site.builtin_receiver:
        return True
    return site.name in (BUILTIN_METHODS if site.attribute else BUILTIN_NAMES)


def calls(code: str, *, with_builtins: bool = False) -> set[str]:
    """Names of the functions and methods ``code`` calls (last attribute component).

    Builtins are left out unless ``with_builtins`` is set: these are the block APIs the selector
    compares, so a block that calls ``d.get`` does not meet code that calls ``d.get``."""
    return {s.name for s in call_sites(code) if with_builtins or not is_builtin(s)}


def definitions(code: str) -> set[str]:
    """Names of the functions and classes ``code`` defines."""
    names: set[str] = set()
    for node in _walk(_parser().parse(code.encode()).root_node):
        if node.type in ("function_definition", "class_definition"):
            found = node.child_by_field_name("name")
            if found is not None:
                names.add(found.text.decode())
    return names


def defines(code: str) -> set[str]:
    """Names ``code`` defines: functions, classes, assigned names."""
    names = definitions(code)
    for node in _walk(_parser().parse(code.encode()).root_node):
        if node.type == "assignment":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                names.add(left.text.decode())
    return names


def external_calls(code: str, defined: Collection[str] | None = None) -> set[str]:
    """The repository APIs ``code`` calls that it does not define itself.

    Builtins never count: a bare builtin name (``len``, ``ValueError``) counts only when
    the repository shadows it, a method called on a surely builtin value (``", ".join``,
    ``out.append`` after ``out = []``, ``str.lower(x)``) and dunders never count.
    The ambiguous case is an attribute call of a builtin-type method name on a value of
    unknown type (``stock.add(...)``, ``self.update(...)``): it counts when the repository
    defines a function or method of that name.

    Args:
        code: the generated code.
        defined: the names the repository defines. When given, the shadowed bare builtins
            and the ambiguous attribute calls are kept iff they are in it. When ``None``
            (the repository is unknown here), the ambiguous attribute calls are kept and
            the bare builtins dropped: kept names can then meet only a block that *defines*
            them, since a block's APIs (``calls``) leave builtins out — the selector does
            the repository check.
    """
    own = defines(code)
    out: set[str] = set()
    for site in call_sites(code):
        if site.name in own:
            continue
        if not is_builtin(site):
            out.add(site.name)
        elif _dunder(site.name) or site.builtin_receiver:
            continue
        elif defined is not None:
            if site.name in defined:
                out.add(site.name)
        elif site.attribute:
            out.add(site.name)
    return out


def first_definition(code: str) -> str | None:
    """The name of the first function or class defined in ``code``."""
    for node in _walk(_parser().parse(code.encode()).root_node):
        if node.type in ("function_definition", "class_definition"):
            found = node.child_by_field_name("name")
            if found is not None:
                return found.text.decode()
    return None
