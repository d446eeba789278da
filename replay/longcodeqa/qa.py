"""LongCodeQA-style repository questions (LongCodeBench): the data, the shuffle, the answer.

A question has one correct option and three wrong ones. Which letter the correct
option gets is decided by a RNG seeded with the run's seed and the question's id
(the paper shuffles the four options against position bias; here a seed gives the
same letters again). The answer is read as the paper's evaluator reads it: a
``Final Answer: X`` line, else a lone letter at the end, else the first option
letter standing alone.

Three file formats load:
- engram's own: ``{"kind": "qa", "id", "repo", "questions": [{"id", "question",
  "correct", "wrong": [three], "evidence"?, "where"?}]}`` (``evidence``: the code
  line that answers it, for the reader-free "answer in context" share);
- LongCodeBench's question file (``github_issues_qa.json``):
  ``{"owner/repo": {"<issue>": {"is_qa", "question", "correct_answer",
  "incorrect_answers": [three]}}}`` — entries with ``is_qa`` false are skipped;
- LongCodeBench's dataset (a list of ``{"repo", "question": "Question:\\n...\\nA) ..."
  , "correct_letter", ...}``): the options are read back from the question text.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LETTERS = ("A", "B", "C", "D")
# the repository context is cut at these shares of the model's window (LongCodeBench's
# length brackets, scaled to the model)
BRACKETS: tuple[tuple[str, float], ...] = (("1/8", 0.125), ("1/4", 0.25), ("1/2", 0.5),
                                           ("all", 1.0))
INSTRUCTION = ("You are given the content of a repository and a question about it. Answer "
               "by stating ONLY the letter of the correct option.")
FINAL = re.compile(r"Final Answer:\s*\(?([ABCD])\b", re.I)
TRAILING = re.compile(r"\b([ABCD])[).:]?\s*$")
STANDALONE = re.compile(r"(?:^|[\s(])([ABCD])(?:[).:]|\s|$)")
OPTION = re.compile(r"^([ABCD])[).]\s*(.*)$")


class QAError(ValueError):
    """A question file that cannot be read."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    correct: str
    wrong: tuple[str, str, str]
    evidence: str = ""  # the code that answers it (reader-free metric); "" unknown
    where: str = ""  # ``path`` or ``path::qualname`` of that code

    def options(self, seed: int) -> tuple[list[str], int]:
        """The four options in the order the seed gives, and the correct one's index."""
        order = [self.correct, *self.wrong]
        rng = random.Random(f"{seed}:{self.id}")
        rng.shuffle(order)
        return order, order.index(self.correct)

    def prompt(self, seed: int) -> tuple[str, str]:
        """(the question as asked, the correct letter)."""
        options, right = self.options(seed)
        lines = [INSTRUCTION, "", "Question:", self.question,
                 *(f"{letter}) {text}" for letter, text in zip(LETTERS, options, strict=True))]
        return "\n".join(lines), LETTERS[right]


@dataclass(frozen=True)
class QASet:
    """The questions about one repository."""

    id: str
    repo: str
    questions: tuple[Question, ...]
    source: Path | None = None
    kind: str = "qa"


def parse_letter(answer: str) -> str | None:
    """The option letter an answer gives, as LongCodeBench's evaluator reads it."""
    text = answer.strip()
    for pattern in (FINAL, TRAILING, STANDALONE):
        found = pattern.search(text)
        if found:
            return found.group(1).upper()
    return None


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise QAError(f"{where}: expected a non-empty string")
    return value.strip()


def _question(raw: Any, where: str, default_id: str) -> Question:
    if not isinstance(raw, dict):
        raise QAError(f"{where}: expected an object with question, correct and wrong")
    wrong = raw.get("wrong", raw.get("incorrect_answers"))
    if not isinstance(wrong, list) or len(wrong) != 3:
        raise QAError(f"{where}: expected three wrong options, got "
                      f"{len(wrong) if isinstance(wrong, list) else type(wrong).__name__}")
    correct = _text(raw.get("correct", raw.get("correct_answer")), f"{where}.correct")
    options = [_text(w, f"{where}.wrong[{i}]") for i, w in enumerate(wrong)]
    if correct in options or len(set(options)) < 3:
        raise QAError(f"{where}: the four options must differ")
    return Question(str(raw.get("id", default_id)), _text(raw.get("question"),
                                                          f"{where}.question"),
                    correct, (options[0], options[1], options[2]),
                    str(raw.get("evidence", "")), str(raw.get("where", "")))


def parse_options(text: str, where: str) -> tuple[str, dict[str, str]]:
    """LongCodeBench's question text: the stem, and its options by letter."""
    stem: list[str] = []
    options: dict[str, str] = {}
    for line in text.splitlines():
        found = OPTION.match(line.strip())
        if found:
            options[found.group(1)] = found.group(2).strip()
        elif options:  # an option spread over lines
            last = list(options)[-1]
            options[last] = f"{options[last]}\n{line}".strip()
        elif line.strip() != "Question:":
            stem.append(line)
    if set(options) != set(LETTERS):
        raise QAError(f"{where}: expected options A) to D) in the question text")
    return "\n".join(stem).strip(), options


def _lcb_dataset(data: list[Any], path: Path) -> list[QASet]:
    per_repo: dict[str, list[Question]] = {}
    for n, raw in enumerate(data):
        where = f"{path}[{n}]"
        if not isinstance(raw, dict):
            raise QAError(f"{where}: expected an object")
        stem, options = parse_options(_text(raw.get("question"), f"{where}.question"), where)
        letter = str(raw.get("correct_letter", "")).strip().upper()
        if letter not in LETTERS:
            raise QAError(f"{where}.correct_letter: expected one of A, B, C, D")
        wrong = [options[x] for x in LETTERS if x != letter]
        repo = str(raw.get("repo", ""))
        per_repo.setdefault(repo, []).append(
            _question({"question": stem, "correct": options[letter], "wrong": wrong},
                      where, f"{n}"))
    return [QASet(f"{path.stem}-{repo.replace('/', '_')}" if len(per_repo) > 1 else path.stem,
                  repo, tuple(qs), path) for repo, qs in per_repo.items()]


def _lcb_issues(data: dict[str, Any], path: Path) -> list[QASet]:
    sets = []
    for repo, issues in data.items():
        if not isinstance(issues, dict):
            raise QAError(f"{path}: {repo!r}: expected issues by number")
        questions = [_question(raw, f"{path}: {repo} #{number}", f"{repo}#{number}")
                     for number, raw in issues.items()
                     if isinstance(raw, dict) and raw.get("is_qa", True)]
        sets.append(QASet(f"{path.stem}-{repo.replace('/', '_')}", repo, tuple(questions), path))
    return sets


def is_lcb(data: Any) -> bool:
    """Whether ``data`` looks like one of LongCodeBench's two question files."""
    if isinstance(data, list):
        return bool(data) and isinstance(data[0], dict) and "correct_letter" in data[0]
    return (isinstance(data, dict) and bool(data) and all(isinstance(v, dict)
                                                          for v in data.values())
            and any(isinstance(i, dict) and "correct_answer" in i
                    for v in data.values() for i in v.values()))


def parse_qa(data: Any, path: Path) -> list[QASet]:
    """Question sets from any of the three formats (``QAError`` says what is wrong)."""
    if isinstance(data, dict) and data.get("kind") == "qa":
        raw = data.get("questions")
        if not isinstance(raw, list) or not raw:
            raise QAError(f"{path}: expected a non-empty 'questions' list")
        questions = tuple(_question(q, f"{path}.questions[{i}]", f"q{i + 1}")
                          for i, q in enumerate(raw))
        ids = [q.id for q in questions]
        if len(set(ids)) != len(ids):
            raise QAError(f"{path}: question ids must be unique")
        return [QASet(str(data.get("id", path.stem)), str(data.get("repo", "")), questions,
                      path)]
    if isinstance(data, list):
        return _lcb_dataset(data, path)
    if is_lcb(data):
        return _lcb_issues(data, path)
    raise QAError(f"{path}: not a question file (engram's 'kind': 'qa', or LongCodeBench's)")


def load_qa(path: Path) -> list[QASet]:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise QAError(f"{path}: cannot read a question file: {exc}") from exc
    sets = parse_qa(data, Path(path))
    if not any(s.questions for s in sets):
        raise QAError(f"{path}: no questions")
    return sets


def as_json(qa: QASet, build: dict[str, Any] | None = None) -> dict[str, Any]:
    """engram's own format, for ``engram replay build --qa``."""
    data: dict[str, Any] = {"kind": "qa", "id": qa.id, "repo": qa.repo, "questions": [
        {"id": q.id, "question": q.question, "correct": q.correct, "wrong": list(q.wrong),
         "evidence": q.evidence, "where": q.where} for q in qa.questions]}
    if build is not None:
        data["build"] = build
    return data
