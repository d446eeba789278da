"""Docstrings turned into what a developer would say: plain sentences.

RST markup goes (roles such as ``:func:`x``` become `` `x` ``, link targets and
directives are dropped, double backquotes become single ones), a doctest is kept only
whole, as "`f(x)` returns `y`.", and text is only ever cut at the end of a sentence.
"""

from __future__ import annotations

import ast
import inspect
import re

ROLE = re.compile(r":(?:[\w-]+:)?[\w-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`__?")  # `text <url>`_ -> text
REFERENCE = re.compile(r"`([^`]+)`__?(?=\W|$)")  # `name`_ -> name
DIRECTIVE = re.compile(r"^\s*\.\.\s")  # .. _target:, .. note::, .. versionadded:: ...
FIELD = re.compile(r"^\s*:(param|parameter|arg|argument|key|keyword|type|raises?|returns?|"
                   r"rtype|yields?|var|ivar|cvar)\b[^:]*:")  # :param x: ..., :returns: ...
SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns?|Yields?|Raises|Examples?|"
                     r"Notes?|See Also|References|Attributes|Warnings?)\s*:?\s*$")
UNDERLINE = re.compile(r"^\s*([-=~^*])\1{2,}\s*$")
# an RST table's border: a simple table's columns of "=" (or "-"), a grid table's "+---+"
TABLE_BORDER = re.compile(r"^\s*(?:=+(?:\s+=+)+|-+(?:\s+-+)+|\+[-=]+\+(?:[-=]+\+)*)\s*$")
LEAD_IN = re.compile(r"^(to|use|here|like|see)\b|\b(for example|for instance|e\.g\.|example|"
                     r"examples|below|following|such as|as follows|this way|like this)\b",
                     re.I)
NOTE = re.compile(r"^(Note|NB|N\.B\.)\s*:\s*|^Note that\s+", re.I)
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "resp.")
MAX_EXAMPLE = 90  # an example longer than this (code or value) is not said
LITERAL = re.compile(r"""^([\[({'"\d-]|range\()""")
MAX_SETUP = 60  # a doctest assignment inlined into a later example when this short


def _inline(text: str, name_words: set[str] | None = None) -> str:
    """One line of docstring prose with its RST markup turned into plain Markdown-ish text."""
    text = re.sub(r"`{2,}", "`", text)
    text = ROLE.sub(lambda m: f"`{_last(m.group(1))}`", text)
    text = LINK.sub(lambda m: m.group(1), text)
    text = REFERENCE.sub(lambda m: m.group(1), text)
    text = re.sub(r"(?<!\w)\*\*?([^*\s][^*]*?)\*\*?(?!\w)", r"\1", text)  # *emphasis*
    text = re.sub(r"\\([*`_|\\])", r"\1", text)  # RST escapes
    return " ".join(text.split())


def _last(target: str) -> str:
    """``~pkg.mod.name`` is shown as ``name``; a call keeps its parentheses."""
    target = target.strip()
    return target.rsplit(".", 1)[-1] if target and "(" not in target else target


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph: a cut after ``.``, ``!`` or ``?`` followed by a space,
    never inside backquotes or after a usual abbreviation."""
    out: list[str] = []
    start = 0
    ticks = 0
    for i, char in enumerate(text):
        if char == "`":
            ticks += 1
        if char not in ".!?" or ticks % 2 or i + 1 >= len(text) or text[i + 1] != " ":
            continue
        words = text[start:i + 1].split()
        if not words or words[-1].lower() in ABBREVIATIONS:
            continue
        head = text[start:i + 1]
        out.append(head.strip())
        start = i + 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def _clauses(sentence: str, keep_case: set[str]) -> list[str]:
    """A sentence cut at its semicolons when each side stands as a sentence (four words
    or more); each part ends with a full stop and starts upper-case unless it starts with
    a name in ``keep_case`` (a parameter) or code."""
    parts = [p.strip() for p in sentence.split("; ")]
    if len(parts) < 2 or any(len(p.split()) < 4 for p in parts):
        return [sentence]
    out = []
    for n, part in enumerate(parts):
        part = part.rstrip(";")
        if n < len(parts) - 1 and part[-1:] not in ".!?":
            part += "."
        first = part.split()[0]
        if first.isalpha() and first.islower() and first not in keep_case:
            part = part[0].upper() + part[1:]
        out.append(part)
    return out


def _example(call: str, value: str) -> str:
    return f"`{call}` returns `{value}`."


def _stored(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)}


def _doctests(lines: list[str]) -> list[str]:
    """The whole doctests of a docstring, each as "`call` returns `value`.": a one-line
    expression with a one-line result. A short assignment before it is inlined; an
    example that needs anything else said before it (a longer assignment, a loop, a
    statement for its effect) is left out, as are results spread over lines."""
    setup: dict[str, str | None] = {}  # name -> its short value, None: not sayable
    out: list[str] = []
    n = 0
    while n < len(lines):
        line = lines[n].strip()
        n += 1
        if not line.startswith(">>>"):
            continue
        code = line[3:].strip()
        more: list[str] = []  # continuation lines (...)
        outputs: list[str] = []
        while n < len(lines) and lines[n].strip() and not lines[n].strip().startswith(">>>"):
            text = lines[n].strip()
            if text.startswith("...") and not outputs:
                more.append(text[3:])
            else:
                outputs.append(text)
            n += 1
        try:
            tree = ast.parse("\n".join([code, *more]))
        except SyntaxError:
            continue
        used = {x.id for x in ast.walk(tree) if isinstance(x, ast.Name)}
        body = tree.body
        if len(body) == 1 and isinstance(body[0], ast.Assign) and not more and not outputs \
                and len(body[0].targets) == 1 and isinstance(body[0].targets[0], ast.Name):
            value = ast.get_source_segment(code, body[0].value) or ""
            if isinstance(body[0].value, ast.Lambda):
                value = f"({value})"
            setup[body[0].targets[0].id] = value if len(value) <= MAX_SETUP else None
            continue
        if len(body) != 1 or not isinstance(body[0], ast.Expr) or more or len(outputs) != 1 \
                or code.startswith("print("):
            # a statement for its effect, a block, a result on many lines: not said, and
            # what it binds or touches is not said later
            setup.update(dict.fromkeys((used & set(setup)) | _stored(tree)))
            continue
        if any(setup[name] is None for name in used & set(setup)):
            continue  # depends on something too long (or too complex) to say
        for _ in range(4):  # setups that use setups
            found = set(re.findall(r"\b[A-Za-z_]\w*\b", code)) & set(setup)
            if not found or any(setup[name] is None for name in found):
                break
            for name in found:
                code = re.sub(rf"(?<![.\w]){re.escape(name)}\b", str(setup[name]), code)
        if set(re.findall(r"(?<![.\w])[A-Za-z_]\w*\b", code)) & set(setup):
            continue
        # an object (an iterator...) may change once used: said once; a literal stays
        setup.update(dict.fromkeys(u for u in used & set(setup)
                                   if not LITERAL.match(str(setup[u]))))
        if len(code) <= MAX_EXAMPLE and len(outputs[0]) <= MAX_EXAMPLE:
            out.append(_example(code, outputs[0]))
    return out


def doc_sentences(raw: str, keep_case: set[str] | None = None) -> tuple[list[str], list[str]]:
    """(prose sentences, examples) of a docstring, in order.

    Prose comes from the paragraphs before the first section header (Args:, Returns:,
    numpy-style underlined headers), without doctests, field lists, directives, link
    targets or tables; examples are the doctests kept whole (``_doctests``)."""
    lines = inspect.cleandoc(raw).splitlines() if raw else []
    keep = keep_case or set()
    paragraphs: list[list[str]] = [[]]
    skipping = False  # inside a directive's indented block
    doctest = False  # inside a doctest: up to the next blank line
    table = False  # inside an RST table: up to a border with a blank line after it
    for n, line in enumerate(lines):
        stripped = line.strip()
        nxt = lines[n + 1] if n + 1 < len(lines) else ""
        if table:  # a table is no sentence: left out whole, up to its bottom border
            table = not (TABLE_BORDER.match(line) and not nxt.strip())
            continue
        if TABLE_BORDER.match(line):
            table = True
            paragraphs.append([])
            continue
        if SECTION.match(line) or (UNDERLINE.match(nxt) and stripped):
            break
        if not stripped:
            skipping = doctest = False
            paragraphs.append([])
            continue
        if doctest or stripped.startswith(">>>"):
            doctest = True
            continue
        if skipping and line[:1].isspace():
            continue
        skipping = False
        if DIRECTIVE.match(line) or FIELD.match(line):
            skipping = True
            paragraphs.append([])
            continue
        if stripped.endswith("::"):  # a literal block follows
            paragraphs[-1].append(stripped)
            skipping = True
            continue
        if line[:1].isspace() and not paragraphs[-1]:
            continue  # an indented block (code, a quote) of its own
        paragraphs[-1].append(stripped)
    sentences: list[str] = []
    for paragraph in paragraphs:
        text = _inline(" ".join(paragraph))
        if not text or text.startswith(("-", "*", "|")):
            continue
        for sentence in split_sentences(text):
            if sentence.endswith(":"):  # a lead-in to an example, a list, a literal block
                if LEAD_IN.search(sentence) or len(sentence.split()) < 3:
                    continue  # says nothing without what follows
                sentence = sentence.rstrip(":") + "."
            sentence = NOTE.sub("", sentence)
            sentence = sentence[:1].upper() + sentence[1:] if sentence[:1].islower() and \
                sentence.split()[0] not in keep else sentence
            if sentence[-1:] not in ".!?":
                if len(sentence.split()) < 3:
                    continue
                sentence = sentence.rstrip(":,;") + "."
            sentences += _clauses(sentence, keep)
    return sentences, _doctests(lines)


def flat(raw: str) -> str:
    """A docstring's plain prose on one line."""
    return " ".join(doc_sentences(raw)[0])


def cut(sentences: list[str], limit: int) -> list[str]:
    """The first sentences that fit in ``limit`` characters (always the first one)."""
    out: list[str] = []
    for sentence in sentences:
        if out and len(" ".join([*out, sentence])) > limit:
            break
        out.append(sentence)
    return out
