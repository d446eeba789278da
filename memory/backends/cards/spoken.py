"""The names a developer's statement holds, bare, quoted or in code spans, resolved against
what the repository and the conversation have (``Lexicon``): functions and classes, files
and modules (a path, a dotted module, a bare module name one file has), and, for each
name, where it is said to come from ("g from m", "m's g", ``m.g``, "from m, g", "g (m)").
A method said with its class ("Stock's remove", "remove on Stock") is one name. The
reading of statements (``reading``) builds on these."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from memory.backends.cards import rules
from memory.backends.cards.rules import (
    CLOSED_SOURCE,
    CODE_SPELLING,
    DETERMINED,
    FROM_BEFORE,
    FROM_IMPORT_BEFORE,
    FROM_WORD,
    FRONTED,
    IMPORT_BEFORE,
    IMPORT_OR_FROM_BEFORE,
    IMPORT_WORD,
    NAME_LIKE,
    ON_CLASS,
    OWNED,
    PATH,
    SENTENCE_START,
    SOURCE_AFTER,
    TAKEN_FROM,
    TOKEN,
)


@dataclass(frozen=True)
class Lexicon:
    """What names resolve against: the repository's symbol names (last parts), its files,
    where each symbol is defined, and the subjects the conversation introduced."""

    symbols: frozenset[str] = frozenset()
    files: tuple[str, ...] = ()
    defined_in: dict[str, str] = field(default_factory=dict)  # symbol -> its file
    subjects: frozenset[str] = frozenset()  # lower-case last parts
    modules: frozenset[str] = frozenset(sys.stdlib_module_names)  # importable by name
    words: frozenset[str] = frozenset()  # ordinary English words (``embed.whole_words``)
    imported: frozenset[str] = frozenset()  # "m.g" for each ``from m import g`` of its files

    def file(self, token: str) -> str:
        """The repository file ``token`` names: a path (its tail, when one file ends so),
        a dotted module (``pkg.mod``) or a bare module name (``mod``, ``mod.py``) that one
        file has; "" when none or several."""
        said = token.strip("./")
        if not said:
            return ""
        if said in self.files:
            return said
        if "/" in said or said.endswith((".py", ".pyi")):
            tail = said if said.endswith((".py", ".pyi")) else said + ".py"
            found = [f for f in self.files if f == tail or f.endswith("/" + tail)]
        else:
            dotted = said.replace(".", "/")
            found = [f for f in self.files if _module_path(f) == dotted
                     or _module_path(f).endswith("/" + dotted)]
            # a module and its type stub (``m.py``, ``m.pyi``) are one module: its source
            found = [f for f in found if not (f.endswith(".pyi") and f[:-1] in found)]
        return found[0] if len(found) == 1 else ""


def _module_path(path: str) -> str:
    pure = PurePosixPath(path)
    stem = str(pure.with_suffix(""))
    return stem.removesuffix("/__init__")


def said_before(text: str, start: int) -> str:
    """What ``text`` says before ``start``, as far as a word's context reaches
    (``CONTEXT_CHARS``); cut, it begins with a word, so that a pattern anchored at the
    start of the text does not take the cut for a sentence's start."""
    if start <= rules.CONTEXT_CHARS:
        return text[:start]
    return "x " + text[start - rules.CONTEXT_CHARS:start]


def said_after(text: str, end: int) -> str:
    """What ``text`` says after ``end``, as far as a word's context reaches."""
    return text[end:end + rules.CONTEXT_CHARS]


@dataclass
class Token:
    text: str
    start: int
    end: int
    quoted: bool
    kind: str = "word"  # name | path | word
    call: bool = False  # said with "()"


def tokens(text: str, lexicon: Lexicon) -> list[Token]:
    """The words of ``text``, each a name, a path or a plain word."""
    found: list[Token] = []

    @functools.cache
    def named() -> frozenset[str]:  # read once, and only when a word needs it (``_worded``)
        return _named_in(text, lexicon)

    for m in TOKEN.finditer(text):
        raw = next(g for g in m.groups() if g is not None)
        quoted = m.group(3) is None
        call = raw.endswith("()")
        word = raw.removesuffix("()").rstrip(".:,;-")
        if not word or not NAME_LIKE.match(word) or ("-" in word and "/" not in word) \
                or ("." in word and word.replace(".", "").isupper()):
            continue  # no name: a format ("YYYY-MM-DD", "DD.MM.YYYY")
        end = m.end() if quoted else m.start(3) + len(word) + (2 if call else 0)
        token = Token(word, m.start(), end, quoted, call=call)
        last = word.rsplit(".", 1)[-1].split("::")[-1]
        if PATH.match(word) and ("/" in word or word.endswith((".py", ".pyi"))) \
                and _in_tree(word, lexicon):
            token.kind = "path"
        elif "." in word and lexicon.file(word) and not call:
            token.kind = "path"  # a dotted module of the repository ("pkg.mod")
        elif quoted or call or last.lower() in lexicon.subjects \
                or CODE_SPELLING.search(word) or (
                    (word in lexicon.symbols or last in lexicon.symbols)
                    and not _worded(word, lexicon, named)):  # "executed once", "cached"
            token.kind = "name" if word.lower() not in rules.PLAIN_WORDS or quoted else "word"
        found.append(token)
    # a capitalised word inside a sentence is a class when the sentence names a module
    named_module = any(t.text in lexicon.modules and t.text not in rules.PLAIN_WORDS
                       for t in found) or bool(IMPORT_WORD.search(text))
    for token in found:
        if token.kind != "word":
            continue
        before, after = said_before(text, token.start), said_after(text, token.end)
        if token.text.lower() in rules.PLAIN_WORDS:
            # a plain word ("count", "map") is a name when the repository imports it by
            # that name from the module it is said to come from ("count from itertools")
            taken = FROM_WORD.match(after)
            if taken is not None and f"{taken['source']}.{token.text}" in lexicon.imported:
                token.kind = "name"
            continue
        # "Decimal from decimal": a word said to come from a module; "take Decimal": a
        # capitalised word inside a sentence (a class)
        if _comes_from(after, lexicon) or (
                token.text[:1].isupper() and token.text[1:].islower() and len(token.text) > 2
                and not SENTENCE_START.search(before) and named_module):
            token.kind = "name"
        elif IMPORT_BEFORE.search(before) and FROM_IMPORT_BEFORE.search(before):
            token.kind = "name"  # "from m import g"
        elif token.text in lexicon.modules and (
                after.lstrip().lower().startswith(rules.MODULE_WORDS)
                or IMPORT_OR_FROM_BEFORE.search(before)
                or (token.text not in rules.WORD_MODULES and not DETERMINED.search(before))):
            # a module ("uses unicodedata", "import re", "the time module"); not a noun
            # with its article ("opens a socket")
            token.kind = "name"
    _named_again(text, found, lexicon)
    return _qualified(text, found, lexicon)


def english(word: str, words: frozenset[str]) -> bool:
    """Whether a bare word is an ordinary English one: in ``words`` (the embedder's whole
    words) or an inflection of one of them ("cached", "chunked", "wrapping")."""
    if word in words:
        return True
    return any(word.endswith(end) and len(word) - len(end) >= 3
               and word[:len(word) - len(end)] + stem in words for end, stem in rules.INFLECTIONS)


def _named_in(text: str, lexicon: Lexicon) -> frozenset[str]:
    """The names a statement quotes and the subjects of the conversation it says."""
    quoted = {m.group(1) or m.group(2) for m in TOKEN.finditer(text)} - {None}
    said = {w for w in rules.WORD.findall(text) if w.lower() in lexicon.subjects}
    return frozenset(quoted | said)


def _worded(word: str, lexicon: Lexicon, named: Callable[[], frozenset[str]]) -> bool:
    """Whether a bare word of the repository's is said as an English word: one of the
    embedder's whole words ("once"), or an inflection of one ("cached") when the statement
    (``named``: its ``_named_in``) names another subject of the conversation or quotes a
    name ("`once` runs f, with the result cached"; not "Put chunked in m.py.", where the
    word is the only candidate)."""
    if word in lexicon.words:
        return True
    return english(word, lexicon.words) and bool(named() - {word})


def _in_tree(word: str, lexicon: Lexicon) -> bool:
    """Whether a word spelled as a path is one: a Python file (a new one too), a file of the
    repository, or under one of its directories; not "and/or" nor "input/output"."""
    if word.endswith((".py", ".pyi")) or not lexicon.files or lexicon.file(word):
        return True
    head = word.strip("./").split("/", 1)[0]
    return any(f.startswith(head + "/") or f"/{head}/" in f for f in lexicon.files)


def _named_again(text: str, found: list[Token], lexicon: Lexicon) -> None:
    """Plain words the statement itself shows to be names: a module said again after the
    statement named it ("From the os module, f needs os"), and a symbol the repository
    defines in a file the statement names ("reuse split, the one in pkg/iterutils.py")."""
    modules = {t.text for t in found if t.kind == "name" and t.text in lexicon.modules}
    files = {lexicon.file(t.text) or t.text for t in found if t.kind == "path"}
    for token in found:
        if token.kind != "word" or DETERMINED.search(said_before(text, token.start)):
            continue
        again = token.text in modules and token.text.lower() not in rules.PLAIN_WORDS
        if again or (lexicon.defined_in.get(token.text) in files
                     and _as_object(text, token, lexicon)):
            token.kind = "name"


def _as_object(text: str, token: Token, lexicon: Lexicon) -> bool:
    """Whether a word is said as a thing, not as a verb: not after a modal, "to" or a
    subject pronoun ("it should wrap the lines"), followed by a preposition or a stop
    ("reuse split for f", "wraps, the one in m.py"), and no inflection of an English word
    ("its result cached.")."""
    before = said_before(text, token.start).split()
    after = said_after(text, token.end).lstrip().lower()
    return not (before and before[-1].lower() in rules.VERB_BEFORE) \
        and (not after or after.startswith(rules.NAMED_AFTER)) \
        and (token.text in lexicon.words or not english(token.text, lexicon.words))


def _comes_from(rest: str, lexicon: Lexicon) -> bool:
    """Whether ``rest`` (what follows a word) says it comes from a module: "from m" with
    ``m`` a module, a file of the repository, or followed by "module"."""
    found = FROM_WORD.match(rest)
    if found is None:
        return False
    source, after = found["source"], (found["after"] or "").strip().lower()
    in_repo = ("." in source or "/" in source) and bool(lexicon.file(source))
    if after in rules.MODULE_WORDS or in_repo:
        return True
    # a bare word after an article is a noun ("segments from the string"), not a module
    return source in lexicon.modules and not (found["the"] and not found["quote"])


def _qualified(text: str, tokens: list[Token], lexicon: Lexicon) -> list[Token]:
    """Tokens with a method said with its class joined into one name: "Stock's remove",
    "remove on Stock", "the remove method of Stock" -> ``Stock.remove`` (the class one of
    the repository's)."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        a = tokens[i]
        b = tokens[i + 1] if i + 1 < len(tokens) else None
        gap = text[a.end:b.start] if b is not None else ""
        if b is not None and a.text in lexicon.symbols and a.text[:1].isupper() \
                and OWNED.match(gap) and b.text[:1].islower() and b.kind != "path":
            out.append(Token(f"{a.text}.{b.text}", a.start, b.end, True, "name"))
            i += 2
            continue
        skip = i + 1  # "remove on Stock", "the remove method of Stock": the class after
        while skip < len(tokens) and skip < i + 4 \
                and tokens[skip].text.lower() in rules.METHOD_LINKS:
            skip += 1
        b = tokens[skip] if skip < len(tokens) else None
        gap = text[a.end:b.start] if b is not None else ""
        skip = skip + 1 - i
        # the method a name of the repository's or of the conversation's, not a verb
        # ("lean on `C`", "depends on `C`")
        method = a.kind == "name" or a.text in lexicon.symbols \
            or a.text.lower() in lexicon.subjects \
            or (b is not None and f"{b.text}.{a.text}".lower() in lexicon.subjects)
        if b is not None and b.text in lexicon.symbols and b.text[:1].isupper() \
                and a.text[:1].islower() and a.kind != "path" and method \
                and ON_CLASS.match(gap):
            out.append(Token(f"{b.text}.{a.text}", a.start, b.end, True, "name"))
            i += skip
            continue
        out.append(a)
        i += 1
    return out


def _is_source(text: str, token: Token, after: str, lexicon: Lexicon) -> str:
    """The module or file ``token`` names as the place a name comes from ("" when it
    cannot: a plain word after "in" that names no file and no module)."""
    if token.kind == "path":
        return lexicon.file(token.text) or token.text
    rest = text[token.end:].lower().lstrip()
    called_module = rest.startswith(rules.MODULE_WORDS)
    in_repo = lexicon.file(token.text)
    if in_repo:
        return in_repo
    if called_module or (after == "from" and token.text[:1].islower()):
        return token.text
    return ""


def pairs(text: str, tokens: list[Token],
           lexicon: Lexicon) -> tuple[dict[int, str], set[int], set[int]]:
    """For each name token (by index) the place it is said to come from, the tokens that
    name such places, and the name tokens whose place was said before them, fronted ("From
    m, f needs g": the reading gives m to what f needs, not to f)."""
    sources: dict[int, str] = {}
    used: set[int] = set()
    fronted_at: set[int] = set()
    at = {t.start: j for j, t in enumerate(tokens)}
    for i, token in enumerate(tokens):
        if token.kind != "name" or i in used:
            continue
        m = SOURCE_AFTER.match(text, token.end)  # "g from m", "g in m.py", "g of the m module"
        if m is not None and m.end() in at:
            j = at[m.end()]
            said = " ".join(m.group(0).lower().split())
            src = _is_source(text, tokens[j], "from" if any(w in said for w in TAKEN_FROM)
                             else "in", lexicon)
            if src and "(" in m.group(0) and not CLOSED_SOURCE.match(text, tokens[j].end):
                src = ""  # "(a, b)": a parameter list, not "(from m)"
            if src:
                sources[i] = src
                used.add(j)
                continue
        for j in range(i - 1, max(i - 6, -1), -1):  # "m's g", "from m, use g"
            before = tokens[j]
            if before.kind == "name" and j not in used and before.text[:1].isupper():
                break
            gap = text[before.end:token.start]
            if j == i - 1 and OWNED.match(gap):
                owner = j - 1 if before.text.lower() in rules.MODULE_WORDS and j > 0 else j
                sources[i] = _is_source(text, tokens[owner], "from", lexicon) \
                    or tokens[owner].text
                used.update({owner, j})
                break
            fronted = FRONTED.match(gap)
            if j not in used and FROM_BEFORE.search(said_before(text, before.start)) \
                    and fronted is not None \
                    and len(gap[fronted.end():].split()) <= 2 \
                    and not any(t.kind == "name" for t in tokens[j + 1:i]):
                src = _is_source(text, before, "from", lexicon)
                if src:
                    sources[i] = src
                    used.add(j)
                    fronted_at.add(i)
                break
    return sources, used, fronted_at


def split_dotted(name: str, lexicon: Lexicon) -> tuple[str, str]:
    """``decimal.Decimal`` -> ("Decimal", "decimal"); a class's method (``Stock.add``)
    stays whole."""
    if "." not in name or "/" in name:
        return name, ""
    head, last = name.rsplit(".", 1)
    if head[:1].islower() and head.lower() not in lexicon.subjects \
            and head not in lexicon.symbols:
        return last, lexicon.file(head) or head
    return name, ""


