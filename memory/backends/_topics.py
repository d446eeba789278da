"""Topic terms of a text without a tagger: identifiers, paths and content words.

LD-Agent keys its event memories by the lemmatised nouns spaCy finds; A-MEM's
keywords are nouns and key concepts. engram ships no POS tagger, so this keeps the
words that can be topics: code identifiers and paths as written, other words
lower-cased and singularised, minus stop words and the verbs and adjectives a
developer's requests are made of.
"""

from __future__ import annotations

import re

_STOP_WORDS = """
a an the and or but if then else when while for to of in on at by with from into onto over
under about as is are was were be been being do does did done doing have has had having it
its this that these those there here i you he she we they me him her us them my your our
their mine yours what which who whom whose why how all any both each few more most other
some such no nor not only own same so than too very can will just should would could may
might must shall also please thanks thank yes ok okay hi hello let lets make made use using
used get gets got need needs want wants like one two three new now still again always never
instead first last next before after up down out off via per etc e.g i.e sure right well
add adds added change changes changed rename renamed write writes wrote written return
returns returned run runs ran fix fixes fixed keep keeps kept call calls called take takes
show shows give gives look looks see seen tell said says know think try tried work works
go goes going put set sets move moved remove removed replace replaced update updated create
created delete deleted define defined implement implemented handle handles check checks
should've don't doesn't can't won't isn't aren't it's that's let's i'm you're we're
good better best bad much many every also only just really actually maybe please answer
question something anything nothing thing things way also
"""
_STOP = frozenset(_STOP_WORDS.split())
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[./:][A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")


def _lemma(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def is_identifier(token: str) -> bool:
    return any(c in token for c in "_./:(") or (token[:1].islower() and
                                                 any(c.isupper() for c in token[1:]))


def terms(text: str, limit: int | None = None) -> list[str]:
    """The text's topic terms in order of first appearance, without repeats."""
    found: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0).removesuffix("()").rstrip("./:")
        if len(token) < 3:
            continue
        if is_identifier(token) or (token[0].isupper() and any(c.isupper() for c in token[1:])):
            found.append(token)
            continue
        word = token.lower()
        if word in _STOP or len(word) < 3:
            continue
        found.append(_lemma(word))
    unique = list(dict.fromkeys(found))
    return unique[:limit] if limit is not None else unique
