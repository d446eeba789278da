"""What the developer said, read without a model: statements, questions and pointers.

``cards`` keeps the developer's own sentences as facts: the extractor's choice among them,
or (``cards_facts=said``) every statement as said. A question states nothing (unless it is a
request: "Can you make parse_date return UTC?"), nor does a heading worded as one, nor a
line that only points at code ("(See `a.py::f`.)").
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.backends.cards import rules
from memory.backends.cards.failures import failure_line
from memory.backends.cards.rules import (
    BARE_PATH,
    HEADING,
    MODAL,
    NAMED_SPAN,
    OPENER,
    POINTING_WORDS,
    PUNCTUATION,
    QUESTION,
    RELATIVE,
    SAID_CONFIDENCE,
    SAID_WORD,
    SENTENCE_BREAK,
    WH_WORD,
)
from memory.backends.mem0 import MAX_STATEMENTS, developer_lines, fact_key
from memory.backends.mem0r import exchange_names

FACT_CHARS = 300  # the longest fact the extraction schema lets a model write


@dataclass
class RawFact:
    text: str
    locations: list[str]
    confidence: float
    said: str = ""  # the whole sentence group it came from, when questions were cut off


def _requests(question: str) -> bool:
    """Whether a question led by a modal asks for something: a verb other than "be" or
    "have" follows its subject ("Can `f` reuse `g`?", "Could you make f return UTC?",
    "How about putting f in m.py?"), not "Could `f` be simpler?" nor "What about `f`?"."""
    found = MODAL.match(question)
    if found is None:
        return False
    words = [w.lower() for w in SAID_WORD.findall(question[found.end():].rstrip("?"))]
    if " " not in found.group(0).strip():  # a modal: its subject comes first
        skipped = 0
        while words and words[0] in rules.PRONOUNS:
            words, skipped = words[1:], skipped + 1
        if not skipped:
            words = words[1:]  # a name
    if " ".join(words[:3]) in rules.ABLE_PHRASES:
        words = words[3:]
    if len(words) >= 3 and words[0] == "be" and rules.PARTICIPLE.match(words[1]) \
            and words[2] in rules.PASSIVE_TARGETS \
            and found.group(0).strip().lower() not in rules.PREDICTING:
        return True  # "can f be declared with (a, b)?": passive, a request
    return bool(words) and words[0] not in rules.STATE_VERBS and len(words) >= 2


def asks(sentence: str) -> bool:
    """A plain question ("Also, what does slugify do?") or a heading worded as one
    ("Where `slugify` should live."): neither states a fact. A request phrased as a
    question ("Can you make parse_date return UTC?") does: it says what is wanted."""
    text = sentence.strip()
    found = OPENER.match(text)
    lead, rest = (found.group(0), text[found.end():]) if found is not None else ("", text)
    plain = bool(lead) and "`" not in lead and not exchange_names(lead)
    if not text.endswith("?"):  # a heading after a label ("Next: where f lives.", "Also,
        # where f lives."), not after a clause ("f uses g, which is in m.py.")
        cut = plain and (lead.rstrip().endswith(":") or not RELATIVE.match(rest))
        bare = rest if cut else text
        return len(bare.split()) <= 8 and bool(HEADING.match(bare))
    # a question after an opener ("Also, is it fast?", "For `f`, what should it return?"),
    # not a tag after a statement naming code ("Put f in m.py, is that fine?")
    bare = rest if lead and (plain or WH_WORD.match(rest)) else text
    if _requests(bare) or _requests(text):
        return False
    return bool(QUESTION.match(text) or QUESTION.match(bare))


def without_questions(text: str) -> str:
    """``text`` without its question sentences ("How is `a.py` organised? A short overview
    is enough." -> "A short overview is enough."); "" when it only asks."""
    return " ".join(p for p in SENTENCE_BREAK.split(text.strip()) if p and not asks(p))


def long_statements(text: str) -> list[str]:
    """The developer's lines longer than one extracted fact may be (a pasted requirement,
    a docstring with its examples), outside code blocks, questions cut off."""
    found: list[str] = []
    for line in map(without_questions, developer_lines(text)):
        if len(line) > FACT_CHARS:
            found.append(line)
    return list(dict.fromkeys(found))


def pointed(line: str) -> list[str] | None:
    """The names of a line that only points at places of the code (code spans holding a
    name or a path, paths, and "see", "also", "and" ...), None when it says something of
    its own: a value, code, any other word, a question, or a colon introducing what
    follows. A pointer states nothing a later turn must respect."""
    text = line.strip()
    if not text or text.endswith((":", "?")):
        return None
    names = exchange_names(text)
    if not names:
        return None
    rest = PUNCTUATION.sub(" ", BARE_PATH.sub(" ", NAMED_SPAN.sub(" ", text)))
    return names if all(w.lower() in POINTING_WORDS for w in rest.split()) else None


def said_statements(text: str) -> list[RawFact]:
    """The developer's statements as said (``cards_facts=said``): each line outside code blocks
    with its questions cut off, whole (a requirement stays with the example or the condition
    said with it), of three words or more, not a line of pasted traceback or test output (those
    are failure units); no repeats (``fact_key``), at most ``MAX_STATEMENTS`` lines. A question
    the line answers itself in a short answer naming code ("Where does `f` go? In `m.py`.")
    stays whole. A line whose questions were cut keeps its whole wording (``said``: "What about
    `f`? It must ..." is about ``f``). A line that only points at places ("(See `a.py::f`.)") is
    no statement: its names become the locations of the statement on the line just before it
    when that one names no code ("The timeout must be 10 s." / "See `db.py::connect`."), else
    they add nothing."""
    found: dict[str, RawFact] = {}
    before: RawFact | None = None  # the fact of the line just before, if it made one
    for line in developer_lines(text):
        names = pointed(line)
        if names is not None:
            if before is not None and not exchange_names(before.said or before.text):
                before.locations.extend(n for n in names if n not in before.locations)
            before = None
            continue
        kept = without_questions(line)
        if kept and len(kept.split()) < 3 and exchange_names(kept) \
                and line.strip().endswith(kept) and not kept.endswith("?"):
            kept = line.strip()  # "Where does f go? In m.py.": a question it answers itself
        if len(kept.split()) < 3 or failure_line(line):
            before = None
            continue
        before = found.setdefault(fact_key(kept), RawFact(
            kept, [], SAID_CONFIDENCE, line.strip() if kept != line.strip() else ""))
    return list(found.values())[:MAX_STATEMENTS]
