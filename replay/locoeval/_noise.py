"""Non-task (noise) topics written from the repository itself: each topic is about one of
its other real functions or files, asked in the words of a developer who reads the code;
no two topics of an outline share a subject."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from replay.locoeval._analyse import BuildError, RepoFacts

FUNCTION_QUESTIONS = (
    "What does `{loc}` do, in two sentences?",
    "Which parts of the code call `{name}`, and why?",
    "Is `{sig}` safe to call with empty or unusual input?",
    "How would you test `{name}` beyond what the tests cover now?",
    "Could `{name}` be simpler? Just your opinion, no code yet.",
    "Does `{name}` have side effects I should know about?",
)
FILE_QUESTIONS = (
    "What is `{path}` responsible for?",
    "Which modules depend on `{path}`?",
    "Is there anything in `{path}` you would refactor?",
    "How is `{path}` organised? A short overview is enough.",
    "Does `{path}` follow the conventions of the rest of the repository?",
)


@dataclass(frozen=True)
class Subject:
    location: str
    questions: tuple[str, ...]

    @property
    def description(self) -> str:
        return f"questions about `{self.location}`"


def subjects(facts: RepoFacts, exclude: set[str]) -> list[Subject]:
    """Every function and file the noise may be about, minus ``exclude`` (locations of the
    removed targets and the files that only held them)."""
    out = []
    for fn in facts.functions:
        if fn.location in exclude:
            continue
        fill = {"loc": fn.location, "name": fn.qualname, "sig": fn.signature}
        out.append(Subject(fn.location, tuple(q.format(**fill) for q in FUNCTION_QUESTIONS)))
    for path in facts.files:
        if path in exclude or path.endswith("__init__.py"):
            continue
        out.append(Subject(path, tuple(q.format(path=path) for q in FILE_QUESTIONS)))
    return out


def noise_topics(facts: RepoFacts, exclude: set[str], sizes: list[int],
                 rng: random.Random) -> list[dict[str, Any]]:
    """One noise topic per entry of ``sizes`` (its number of queries), each about a
    distinct subject drawn at random."""
    pool = [s for s in subjects(facts, exclude)]
    rng.shuffle(pool)
    topics = []
    for n, size in enumerate(sizes):
        fitting = [s for s in pool if len(s.questions) >= size]
        if not fitting:
            raise BuildError(f"the repository has too few functions and files for {len(sizes)} "
                             "distinct noise topics")
        subject = fitting[0]
        pool.remove(subject)
        asked = rng.sample(subject.questions, size)
        topics.append({"id": f"n{n}", "kind": "noise", "sample": None,
                       "about": subject.location, "description": subject.description,
                       "queries": [{"id": f"n{n}-q{j}", "type": "other", "contains": [],
                                    "keys": [{"type": "location", "key": subject.location}],
                                    "summary": text, "recap": False}
                                   for j, text in enumerate(asked)]})
    return topics
