"""What a developer's statement is about, whatever its phrasing: the function it concerns,
the aspect it sets (location, parameters, dependency, behaviour, constraint) and the
value it gives.

Names are read bare, quoted or in backticks, and resolved against the repository's
symbols and files and the subjects the conversation introduced (``Lexicon``); a path
against the tree (a bare module name too, after a word of place, when one file has that
name); a parameter list by its parentheses; a dependency by a name other than the
subject plus where it comes from, said before or after it ("g from m", "m's g",
"``m.g``", "from m, g"). The subject is a name the conversation already talks about,
else the name a passive gives after "by", else the first name not said to come from
somewhere. The aspect is read by meaning: the statement, its names masked, is embedded
and compared with prototype statements of each aspect (``rules.PROTOTYPES``), among the
aspects whose values it holds. A value statement then has one ``form`` whatever its
phrasing ("`f` belongs in `p`.", "`f` takes (a, b).", "`f` should reuse `g` from `p`.",
"`f` needs `g` from the `m` module."), which the revision rules compare: two statements
of one aspect about one function set the same slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from memory.backends.cards import params, rules, spoken
from memory.backends.cards.names import kind
from memory.backends.cards.rules import ACTING, DOUBLE_ARTICLE, MASKED_PLACES
from memory.backends.cards.spoken import (
    Lexicon,
    Token,
    pairs,
    said_after,
    said_before,
    split_dotted,
)
from memory.index.embed import Embedder, cosine


@dataclass(frozen=True)
class Reading:
    """What a statement is about. ``aspect`` is "" when no name was read as its subject."""

    subject: str = ""
    aspect: str = ""
    value: str = ""  # the place, "(a, b)", or the dependency's name
    source: str = ""  # where a dependency comes from: a file of the repository or a module
    internal: bool = False  # the dependency is the repository's own

    def form(self) -> str:
        """The statement in one phrasing per aspect ("" for other aspects): what the
        slot rules compare."""
        s, v = self.subject, self.value
        if not s or not v:
            return ""
        if self.aspect == "location":
            return f"`{s}` belongs in `{v}`."
        if self.aspect == "parameters":
            return f"`{s}` takes {v}."
        if self.aspect != "dependency":
            return ""
        if self.internal:
            return f"`{s}` should reuse `{v}` from `{self.source}`." if self.source \
                else f"`{s}` should reuse `{v}`."
        return f"`{s}` needs `{v}` from the `{self.source}` module." if self.source \
            else f"`{s}` needs `{v}`."


class Reader:
    """Reads statements (``read``) with the embedder (the aspects' prototypes)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._prototypes: dict[str, np.ndarray] | None = None

    def prototypes(self) -> dict[str, np.ndarray]:
        if self._prototypes is None:
            texts = [t for group in rules.PROTOTYPES.values() for t in group]
            vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            out, n = {}, 0
            for name, group in rules.PROTOTYPES.items():
                out[name] = vectors[n:n + len(group)]
                n += len(group)
            self._prototypes = out
        return self._prototypes

    def read(self, text: str, lexicon: Lexicon) -> Reading:
        return self.read_all([text], lexicon)[0]

    def read_all(self, texts: list[str], lexicon: Lexicon) -> list[Reading]:
        """The readings of ``texts``: names and values first, then one embedding call for
        the aspects of those that hold a value."""
        drafts = [_draft(t, lexicon) for t in texts]
        masked = [d.masked for d in drafts if d.options]
        vectors = np.asarray(self.embedder.embed(masked), dtype=np.float32) if masked \
            else np.zeros((0, 1), dtype=np.float32)
        protos = self.prototypes() if masked else {}
        out: list[Reading] = []
        n = 0
        for d in drafts:
            if not d.options:
                out.append(Reading(d.subject))
                continue
            v = vectors[n]
            n += 1
            scores = {a: float(np.max(cosine(v, protos[a]))) for a in protos}
            prose = max(scores["behaviour"], scores["constraint"])
            best = max(d.options, key=lambda a: scores[a])
            if scores[best] - prose < rules.VALUE_MARGIN:
                aspect = "behaviour" if scores["behaviour"] >= scores["constraint"] \
                    else "constraint"
                out.append(Reading(d.subject, aspect))
                continue
            out.append(Reading(d.subject, best, *d.options[best]))
        return out


@dataclass
class _Draft:
    subject: str = ""
    options: dict[str, tuple[str, str, bool]] = field(default_factory=dict)
    masked: str = ""


def _draft(text: str, lexicon: Lexicon) -> _Draft:
    tokens = spoken.tokens(text, lexicon)
    names = [i for i, t in enumerate(tokens) if t.kind == "name"]
    if not names:
        return _Draft()
    sources, used, fronted = pairs(text, tokens, lexicon)
    names = [i for i in names if i not in used]
    if not names:
        return _Draft()
    lower = text.lower()

    def key(i: int) -> str:
        return tokens[i].text.rsplit(".", 1)[-1].split("::")[-1].lower()

    # a name said to come from somewhere is what is used, not the subject, unless that
    # place was said first ("From m, f needs g": m is g's)
    free = [i for i in names if i not in sources or i in fronted]
    known = [i for i in free if key(i) in lexicon.subjects]
    # else a name that can be a function: not a module, a constant or inside parentheses
    able = [i for i in free if not _in_args(text, tokens[i])
            and tokens[i].text not in lexicon.modules and not tokens[i].text.isupper()]
    by = [i for i in able if _after_word(lower, tokens[i], rules.AGENT_WORDS)]
    acting = [i for i in able if ACTING.match(said_after(lower, tokens[i].end))]
    scoped = [[i for i in able if _after_word(lower, tokens[i], words)]
              for words in rules.SCOPE_WORDS]
    # a name inside a parameter list is a parameter, never the subject
    listed = params.lists(text)
    outside = [i for i in names
               if not any(a < tokens[i].start < b for a, b, _ in listed)]
    chosen = next((c for c in (known, by, acting, *scoped, able, outside) if c), None)
    if chosen is None:
        return _Draft()
    pick = chosen[0]
    subject = tokens[pick].text
    draft = _Draft(subject)
    # the source of the subject, said "f in m.py", is its place
    taken = {pick}
    places: list[str] = []
    placed_at: set[int] = set()  # tokens naming a place
    lent = ""  # "from m, f needs g": a module is no place of f's; g comes from it
    if pick in sources:
        if _placeable(sources[pick], lexicon) and pick not in fronted:
            places.append(sources[pick])
        else:
            lent = sources[pick]
    for i, t in enumerate(tokens):
        if i == pick:
            continue
        if i in used:
            continue  # where a name comes from (the subject's: placed above)
        if _rejected(lower, t, place=True):
            continue  # "in m.py, not n.py": n.py is no place of the statement's
        if t.kind == "path":
            places.append(lexicon.file(t.text) or t.text)
            placed_at.add(i)
        elif t.kind == "word":
            before = said_before(lower, t.start).rstrip()
            after = said_after(lower, t.end).lstrip()
            placed = before.endswith(tuple(f" {w}" for w in rules.PLACE_WORDS)) \
                or before.endswith(tuple(f" {w} the" for w in rules.PLACE_WORDS))
            if (placed or after.startswith(rules.MODULE_WORDS)) and lexicon.file(t.text):
                places.append(lexicon.file(t.text))
                placed_at.add(i)
    if places:
        draft.options["location"] = (places[-1], "", False)
    args = _parameters(text, tokens, pick, listed)
    if args is not None:
        draft.options["parameters"] = (args, "", False)
    others = [i for i in names if i not in taken and not _in_args(text, tokens[i])
              and tokens[i].text != subject and not _rejected(lower, tokens[i])
              and _resolves(tokens[i], i in sources, lexicon)]
    if others:
        i = others[0]
        name, source = split_dotted(tokens[i].text, lexicon)
        source = sources.get(i, source) or lent
        internal = bool(lexicon.file(source)) if source else \
            name.rsplit(".", 1)[-1] in lexicon.symbols
        if internal and not source:
            source = lexicon.defined_in.get(name.rsplit(".", 1)[-1], "")
        elif not source and name in lexicon.modules:
            source = name  # a module used whole ("uses re")
        draft.options["dependency"] = (name, source, internal)
    draft.masked = _masked(text, tokens, pick, used | placed_at, lexicon)
    return draft


def _resolves(token: Token, sourced: bool, lexicon: Lexicon) -> bool:
    """Whether a name can be a dependency: the repository has it, it is a module, it is
    said to come from somewhere ("g from m", ``m.g``), or it is spelled as a class, an
    exception or a constant; not a value or a parameter in code spans (`unicode`, `maxsize`),
    nor a file's name said bare ("filename.ext", "report.txt")."""
    name = token.text
    last = name.rsplit(".", 1)[-1]
    head = split_dotted(name, lexicon)[1]
    dotted = bool(head) and (token.quoted or token.call or _placeable(head, lexicon)
                             or last.lower() not in rules.FILE_EXTENSIONS)
    return sourced or last in lexicon.symbols or name in lexicon.modules or dotted \
        or kind(last) != "function"


def _placeable(source: str, lexicon: Lexicon) -> bool:
    """Whether a source is a file of the repository or a path (a place a function can
    belong in), not a module of elsewhere."""
    return "/" in source or source.endswith((".py", ".pyi")) or bool(lexicon.file(source))


def _after_word(lower: str, token: Token, words: tuple[str, ...]) -> bool:
    """Whether ``token`` is said right after one of ``words`` ("used by f", "for f, ...")."""
    before = said_before(lower, token.start).rstrip()
    return any(before == w or before.endswith((f" {w}", f"({w}")) for w in words)


def _rejected(lower: str, token: Token, place: bool = False) -> bool:
    """Whether a place or a name is said as the one not wanted: right after one of
    ``REJECTING_WORDS``, a word of place or an article between ("m.py, not n.py", "not in
    n.py", "rather than the n module", "instead of g"); not "should not reuse g" (a verb
    between: the statement negates a use, ``uses.negates_use``). A ``place`` is also
    rejected when its clause negates it within ``NEGATED_REACH`` words ("must not go in
    n.py", "doesn't belong in n.py")."""
    words = said_before(lower, token.start).replace("`", " ").replace('"', " ").split()
    while words and words[-1] in (*rules.PLACE_WORDS, *rules.DETERMINERS):
        words.pop()
    said = " ".join(words[-2:])
    if any(said == w or said.endswith(f" {w}") for w in rules.REJECTING_WORDS):
        return True
    if not place:
        return False
    clause = []
    for word in reversed(words[-rules.NEGATED_REACH:]):
        if word[-1:] in ",;:":
            break  # the clause before: "If it is not, put f in n.py"
        clause.append(word)
    return any(w in rules.NEGATING_WORDS or w.endswith("n't") for w in clause)


def _in_args(text: str, token: Token) -> bool:
    """Whether a name is said inside a parenthesised list (a parameter, not a dependency)."""
    before = text[:token.start]
    return before.count("(") > before.count(")")


def _parameters(text: str, tokens: list[Token], subject: int,
                listed: list[tuple[int, int, str]]) -> str | None:
    """The parameter list a statement gives, in one spelling: the first of its ``listed``
    ones (``params.lists``) not right after another name (a call of it)."""
    for start, end, spelled in listed:
        if text[:start].rstrip().endswith("`") and text[end:end + 1] == "`":
            continue  # "`(a, b)`": a value in a code span (a tuple), not a list
        owner = next((t for t in reversed(tokens) if t.end <= start), None)
        if any(t.call and t.start < start < t.end for t in tokens):
            continue  # "f()": a name said as a call
        if owner is not None and owner.end == start and owner.kind == "name" \
                and owner.text != tokens[subject].text:
            continue  # "g(x)": a call of another name
        return spelled
    return None


def _mask(name: str, lexicon: Lexicon) -> str:
    """The neutral words a name is masked by: what kind of thing it is."""
    if name in lexicon.modules:
        return rules.MASKS["module"]
    return rules.MASKS[kind(name)]


def _masked(text: str, tokens: list[Token], subject: int, places: set[int],
            lexicon: Lexicon) -> str:
    """``text`` with its names, places and parameter lists replaced by neutral words."""
    out, at = [], 0
    for i, t in enumerate(tokens):
        if (t.kind == "word" and i not in places) or (i != subject and _in_args(text, t)):
            continue  # a plain word, or one inside parentheses (masked with them)
        out.append(text[at:t.start])
        out.append(rules.MASK_SUBJECT if i == subject else
                   rules.MASK_PLACE if t.kind == "path" or lexicon.file(t.text) else
                   rules.MASKS["module"] if i in places else _mask(t.text, lexicon))
        at = t.end
    out.append(text[at:])
    masked = params.masked("".join(out), " " + rules.MASK_ARGS, lists_only=True)
    masked = DOUBLE_ARTICLE.sub("", masked)
    for said, mask in MASKED_PLACES:  # "the that file module"
        masked = said.sub(mask, masked)
    return " ".join(masked.split())
