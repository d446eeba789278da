"""The context-reading scripted model's conversation answers, an assistant's length.

A real assistant answers a developer's message about a repository with the code it was
shown for it and an explanation: hundreds to a few thousand tokens per answer, so that a
conversation of 30-70 turns fills 64K-256K tokens (LoCoEval, Table 4). ``answer``
composes such a reply from the prompt alone, deterministically and without any ground
truth: the fenced Python blocks of the system message (the repository code a backend
retrieved for this question, a memory's code), those the question names first, each
followed by a paragraph on what it does, read off its syntax tree (parameters, calls,
return values, exceptions, the docstring's first sentence), until ``words`` words.

The paragraphs never restate the developer's message: what the developer said reaches a
later context only through the developer's own turn.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from dataclasses import dataclass

from memory.fences import blocks, fenced

ANSWER_WORDS = 1500  # a long repository answer: about 2-3K tokens of code and prose
LOCATION = re.compile(r"^# (?P<loc>[^\n`]+)$")
NAMED = re.compile(r"`([^`\s]+)`")
OPENING = "Here is the code in front of me that bears on this, and what each part does."
CLOSING = "That is what the code shows; say when you want me to write the function itself."
NOTHING = "I have no repository code in front of me for this; noted, go on."


@dataclass(frozen=True)
class Shown:
    """A block of code from the prompt: where it is from (``path::Qual.name`` or "") and
    its text."""

    where: str
    code: str

    @property
    def name(self) -> str:
        return self.where.rsplit("::", 1)[-1].split(".")[-1] if "::" in self.where else ""

    @property
    def path(self) -> str:
        return self.where.split("::", 1)[0]


def shown_code(system: str) -> list[Shown]:
    """Every fenced Python block of ``system`` once, in the order shown."""
    seen: dict[str, Shown] = {}
    lines = system.splitlines()
    for block in blocks(system):
        if block.info != "python":
            continue
        code = block.text.rstrip()
        header = LOCATION.match(lines[block.start - 1]) if block.start else None
        if code.strip() and code not in seen:
            seen[code] = Shown(header.group("loc").strip() if header else "", code)
    return list(seen.values())


def asked_about(block: Shown, question: str) -> bool:
    """Whether the question names the block's function or its file."""
    named = set(NAMED.findall(question))
    parts = {p for n in named for p in (n, n.split("::")[-1], n.split("::")[0],
                                         n.split(".")[-1])}
    return bool(block.where) and (block.where in named or block.name in parts
                                  or block.path in parts)


def answer(system: str, question: str, words: int = ANSWER_WORDS) -> str:
    """The reply to ``question``: the code of ``system`` it concerns, explained, within
    ``words`` words (every block that fits, those the question names first)."""
    blocks = shown_code(system)
    if not blocks:
        return NOTHING
    ordered = [b for b in blocks if asked_about(b, question)]
    ordered += [b for b in blocks if b not in ordered]
    parts, used = [OPENING], len(OPENING.split()) + len(CLOSING.split())
    for block in ordered:
        header = f"# {block.where}\n" if block.where else ""
        part = f"{header}{fenced(block.code, 'python')}\n{explain(block)}"
        size = len(part.split())
        if used + size > words:
            continue
        parts.append(part)
        used += size
    if len(parts) == 1:
        return NOTHING
    return "\n\n".join([*parts, CLOSING])


@functools.lru_cache(maxsize=4096)
def explain(block: Shown) -> str:
    """One paragraph on a block: its size, what it takes, calls, gives back and raises,
    and its docstring's first sentence (each sentence names the block: no two alike).
    Kept per block: a replay shows the same blocks turn after turn."""
    lines = block.code.count("\n") + 1
    try:
        tree = ast.parse(textwrap.dedent(block.code))
    except SyntaxError:
        tree = None
    node = next((n for n in (tree.body if tree else []) if isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)), None)
    label = f"`{block.name or (node.name if node else 'this block')}`"
    where = f" in `{block.path}`" if block.path else ""
    if node is None:
        return f"The block{where} ({lines} lines) sets up module-level names the rest uses."
    if isinstance(node, ast.ClassDef):
        methods = [n.name for n in node.body
                   if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        said = f"The class {label}{where} spans {lines} lines"
        said += (f" with the methods {_names(methods)}." if methods else ".")
        return said + _docstring(node, label)
    args = node.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    params += [f"*{a.arg}" for a in (args.vararg,) if a] + \
        [f"**{a.arg}" for a in (args.kwarg,) if a]
    sentences = [f"Reading {label}{where}: {lines} lines, over "
                 + (f"({', '.join(params)})" if params else "no arguments") + "."]
    calls = _calls(node)
    if calls:
        sentences.append(f"Inside, {label} calls {_names(calls)}.")
    returns = [ast.unparse(n.value) for n in ast.walk(node)
               if isinstance(n, ast.Return) and n.value is not None]
    if returns:
        shown = list(dict.fromkeys(r if len(r) <= 60 else r[:57] + "..." for r in returns))
        sentences.append(f"What {label} hands back is {' or '.join(f'`{r}`' for r in shown[:3])}.")
    raised = _raised(node)
    if raised:
        sentences.append(f"On bad input {label} raises {_names(raised)}.")
    return " ".join(sentences) + _docstring(node, label)


def _names(names: list[str]) -> str:
    shown = [f"`{n}`" for n in names[:8]]
    return ", ".join(shown) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def _calls(node: ast.AST) -> list[str]:
    raised = {id(n.exc) for n in ast.walk(node) if isinstance(n, ast.Raise)}
    found: list[str] = []
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and id(call) not in raised:
            func = call.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name and name not in found:
                found.append(name)
    return found


def _raised(node: ast.AST) -> list[str]:
    found: list[str] = []
    for raise_ in ast.walk(node):
        if isinstance(raise_, ast.Raise) and raise_.exc is not None:
            exc = raise_.exc.func if isinstance(raise_.exc, ast.Call) else raise_.exc
            name = ast.unparse(exc)
            if name not in found:
                found.append(name)
    return found


def _docstring(node: ast.AST, label: str) -> str:
    doc = ast.get_docstring(node) if isinstance(
        node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None
    if not doc:
        return ""
    first = re.split(r"(?<=[.!?])\s", " ".join(doc.split()), maxsplit=1)[0]
    first = first if len(first) <= 200 else first[:197] + "..."
    return f" The docstring of {label} opens with: {first}"
