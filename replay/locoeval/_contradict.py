"""Plain contradictions of a description (core functionality, a logical constraint) for
the outline builder's distractors (LoCoEval 3.1.2).

A stale version says the same kind of thing about the same function, in the same
frame, and contradicts the true one; it never says that it is stale. In order of
preference: the truth negated, a value of the truth swapped (an exception class, a
number, a type, an order, a unit), and a requirement of another real function of the
repository restated about the target. Code spans, quoted text and the function's
parameter names are never rewritten.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable

from replay.locoeval._analyse import Function, RepoFacts
from replay.locoeval._prose import doc_sentences

# words that would tell a reader a statement is not final; a candidate saying any of
# them (outside code) is not used. The builder's own guard: tests keep their own list.
REVISION_WORDS = re.compile(
    r"\b(actually|scratch|for now|for the moment|outdated|later|first version|forget|"
    r"instead|no longer|anymore|change of plan|temporar\w*|placeholder|stub|earlier|"
    r"previous\w*|initial\w*|originally|at first|to begin with|correction|correct(ed)? "
    r"that|revis\w+|updated?|stale|draft|tbd|todo|eventually|in the future|real logic|"
    r"the opposite|never ?mind|ignore|wait|rather|new plan|old plan|on second thought|"
    r"obsolete|deprecated|tentative\w*|provisional\w*|skip this|drop this|until|"
    r"replac(e|ed|es|ing)|redo|interim|not final)\b|\bnot:",
    re.I)
CONSTRAINT = re.compile(r"\b(raises?|must|never|at most|at least|only|not|without|fewer|"
                        r"positive|non-negative|empty|sorted|keeping order|otherwise)\b", re.I)
NEGATIONS = (
    (r"\bRaises\b", "Never raises"), (r"\braises\b", "never raises"),
    (r"\bat most\b", "at least"), (r"\bat least\b", "at most"),
    (r"\bfewer than\b", "more than"), (r"\bmore than\b", "fewer than"),
    (r"\bless than\b", "greater than"), (r"\bgreater than\b", "less than"),
    (r"\bnon-negative\b", "negative"), (r"\bpositive\b", "negative"),
    (r"\bnot including\b", "including"), (r"(?<!not )\bincluding\b", "not including"),
    (r"\bupper-case\b", "lower-case"), (r"\blower-case\b", "upper-case"),
    (r"\bcase-insensitive\b", "case-sensitive"), (r"\bcase-sensitive\b", "case-insensitive"),
    (r"\bunsorted\b", "sorted"), (r"\bsorted\b", "unsorted"),
    (r"\bkeeping order\b", "in any order"), (r"\bin order\b", "in any order"),
    (r"(?<!-)\bempty\b", "non-empty"), (r"\bnon-empty\b", "empty"),
    (r"\bhalves away from zero\b", "halves to even"), (r"\bup to\b", "past"),
    (r"\bis dropped\b", "is kept"), (r"\bis kept\b", "is dropped"),
    (r"\binclusive\b", "exclusive"), (r"\bexclusive\b", "inclusive"),
    (r"\blazily\b", "eagerly"), (r"\bin place\b", "as a new copy"),
    (r"\balways\b", "never"), (r"\bnever\b", "always"), (r"\bmust\b", "need not"),
    (r"\bis not\b", "is"), (r"\bare not\b", "are"), (r"\bdoes not\b", "does"),
    (r"\bcannot\b", "can"), (r"\bwithout\b", "with"), (r"\bsingle\b", "double"),
)
TYPE_SWAPS = {"Decimal": "float", "float": "Decimal", "list": "tuple", "lists": "tuples",
              "tuple": "list", "tuples": "lists", "iterator": "list", "generator": "list",
              "dict": "list of pairs", "dictionary": "list of pairs",
              "int": "float", "integer": "float", "integers": "floats", "True": "False",
              "False": "True", "None": "an empty list", "str": "bytes", "string": "bytes",
              "strings": "bytes objects", "bytes": "str", "date": "datetime",
              "iterable": "list"}
ORDER_SWAPS = {"ascending": "descending", "descending": "ascending", "first": "last",
               "last": "first", "smallest": "largest",
               "largest": "smallest", "lowest": "highest", "highest": "lowest",
               "minimum": "maximum", "maximum": "minimum", "oldest": "newest",
               "newest": "oldest", "earliest": "latest", "before": "after",
               "after": "before", "leading": "trailing", "trailing": "leading",
               "prefix": "suffix", "suffix": "prefix", "beginning": "end",
               "shortest": "longest", "longest": "shortest"}
UNIT_SWAPS = {"cents": "tenths", "seconds": "milliseconds", "milliseconds": "seconds",
              "minutes": "seconds", "hours": "minutes", "days": "hours", "weeks": "days",
              "bytes": "characters", "characters": "bytes", "words": "characters",
              "percent": "per mille", "dashes": "underscores", "underscores": "dashes",
              "spaces": "tabs", "commas": "semicolons"}
NUMBER_WORDS = {"two": "three", "three": "four", "twice": "three times", "half": "a third"}
BUILTIN_ERRORS = ("ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
                  "LookupError")
EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]|\.\d)")
THEN = re.compile(r"\b([a-z]+) then ([A-Za-z]+)\b")
TOO_CLOSE = 0.8  # a borrowed requirement this similar to one of the target's is not used
MAX_BORROWED = 240


def protected(text: str, names: Iterable[str] = ()) -> list[tuple[int, int]]:
    """Spans never rewritten: code in backquotes, quoted text, the given names."""
    spans = [m.span() for m in re.finditer(r"`[^`]*`|'[^']*'|\"[^\"]*\"", text)]
    for name in names:
        if name:
            spans += [m.span() for m in re.finditer(rf"\b{re.escape(name)}\b", text)]
    return spans


def _sub_first(text: str, pattern: re.Pattern[str] | str, make: Callable[[re.Match], str | None],
               spans: list[tuple[int, int]]) -> str | None:
    """``text`` with the first match outside ``spans`` replaced by ``make(match)``."""
    for match in re.finditer(pattern, text):
        if any(a < match.end() and match.start() < b for a, b in spans):
            continue
        new = make(match)
        if new is None or new == match.group(0):
            continue
        return text[:match.start()] + new + text[match.end():]
    return None


def _case(word: str, like: str) -> str:
    return word[0].upper() + word[1:] if like[:1].isupper() and word[:1].islower() else word


def negate(sentence: str, names: Iterable[str] = ()) -> str | None:
    spans = protected(sentence, names)
    for pattern, replacement in NEGATIONS:
        out = _sub_first(sentence, pattern, lambda m, r=replacement: _case(r, m.group(0)), spans)
        if out is not None:
            return out
    return None


def _number(match: re.Match) -> str:
    text = match.group(1)
    if "." in text:
        return f"{float(text) * 2:g}"
    value = int(text)
    return str(value + 1 if value < 3 else value * 2)


def swaps(sentence: str, names: Iterable[str], errors: list[str]) -> list[str]:
    """The sentence with one value of its own changed, one candidate per kind of value."""
    spans = protected(sentence, names)
    out: list[str | None] = []

    def other_error(m: re.Match) -> str | None:
        return next((e for e in errors if e != m.group(0)), None)

    out.append(_sub_first(sentence, EXCEPTION, other_error, spans))
    out.append(_sub_first(sentence, NUMBER, _number, spans))
    words = "|".join(map(re.escape, NUMBER_WORDS))
    out.append(_sub_first(sentence, rf"\b({words})\b",
                          lambda m: NUMBER_WORDS[m.group(0)], spans))
    for table, cased in ((TYPE_SWAPS, False), (ORDER_SWAPS, True), (UNIT_SWAPS, True)):
        words = "|".join(map(re.escape, sorted(table, key=len, reverse=True)))
        out.append(_sub_first(  # a type keeps its own spelling; a word starts a sentence
            sentence, rf"\b({words})\b",
            lambda m, t=table, c=cased: _case(t[m.group(0)], m.group(0)) if c
            else t[m.group(0)], spans))
    out.append(_sub_first(sentence, THEN, lambda m: f"{m.group(2)} then {m.group(1)}", spans))
    return [s for s in out if s is not None]


def error_names(facts: RepoFacts) -> list[str]:
    """Exception classes to swap in: the repository's own first, then built-in ones."""
    own = sorted(n for n in facts.definitions if EXCEPTION.fullmatch(n))
    return [*own, *(e for e in BUILTIN_ERRORS if e not in own)]


def said(facts: RepoFacts, fn: Function) -> list[str]:
    """The plain sentences of a function's docstring (cached on ``facts``)."""
    if fn.location not in facts.said:
        facts.said[fn.location] = doc_sentences(fn.raw_doc or fn.doc)[0]
    return facts.said[fn.location]


def borrowed(facts: RepoFacts, subject: str, own: list[str], rule: Callable[[str], bool],
             core: bool, skip: set[str]) -> list[tuple[str, str]]:
    """Requirements of other real functions that could be said of the target, most like
    ``subject`` first: (sentence, the function's name to restate). ``core``: each
    function's opening sentence, else its sentences that state a rule (``rule``);
    sentences too close to one of the target's own (``own``) are left out."""
    found: list[tuple[str, str]] = []
    for fn in facts.functions:
        if fn.location in skip:
            continue
        sentences = said(facts, fn)
        picked = sentences[:1] if core else [s for s in sentences[1:] if rule(s)]
        for sentence in picked:
            if not 15 <= len(sentence) <= MAX_BORROWED or REVISION_WORDS.search(
                    re.sub(r"`[^`]*`", "", sentence)):
                continue
            if any(_close(sentence, o) for o in own):
                continue
            found.append((sentence, fn.name))
    found = list(dict.fromkeys(found))
    return sorted(found, key=lambda f: (-_likeness(subject, f[0]), f[0]))


@functools.lru_cache(maxsize=1 << 16)
def _likeness(a: str, b: str) -> float:
    """difflib's ratio of ``a`` to ``b`` (kept: the same pairs recur across a build's seeds
    and targets)."""
    return difflib.SequenceMatcher(None, a, b).ratio()


@functools.lru_cache(maxsize=1 << 16)
def _close(a: str, b: str) -> bool:
    """``a`` is TOO_CLOSE to ``b``: difflib's ratio, decided first by its cheap upper
    bounds (lengths, then letters in common) when they already fall below."""
    matcher = difflib.SequenceMatcher(None, a, b)
    return (matcher.real_quick_ratio() > TOO_CLOSE and matcher.quick_ratio() > TOO_CLOSE
            and matcher.ratio() > TOO_CLOSE)


def restate(sentence: str, name: str, qual: str) -> str:
    """A borrowed sentence about ``name`` made about the target."""
    return re.sub(rf"`{re.escape(name)}(\(\))?`", f"`{qual}`", sentence)


def contradictions(subject: str, frame: str, qual: str, names: list[str], facts: RepoFacts,
                   own: list[str], rule: Callable[[str], bool], core: bool,
                   skip: set[str]) -> list[str]:
    """Plain stale versions of a description, best first, each in ``frame`` (a format
    string with ``{qual}`` and ``{claim}``): negation, value swaps, borrowed rules."""
    claims: list[str] = []
    negated = negate(subject, names)
    if negated:
        claims.append(negated)
    claims += swaps(subject, names, error_names(facts))
    claims += [restate(s, name, qual)
               for s, name in borrowed(facts, subject, own, rule, core, skip)]
    out = []
    for claim in dict.fromkeys(claims):
        if claim == subject or REVISION_WORDS.search(re.sub(r"`[^`]*`", "", claim)):
            continue
        out.append(frame.format(qual=qual, claim=claim))
    return out
