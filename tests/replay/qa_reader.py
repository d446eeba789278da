"""A context-reading scripted model for ``qa`` questions (tests only).

It answers a question correctly only when the code that answers it (the
question's ``evidence``) is in the prompt before the question; else it says it
cannot tell, which reads as no letter (a wrong answer). Without any context (the
contamination filter's structured call) it answers the ``known`` questions right,
as a model that saw the repository in training would, and the others with "A"
(right by chance when the seed put the correct option first).
"""

from __future__ import annotations

import json
from typing import Any

from replay.longcodeqa.qa import LETTERS, QASet, Question


def norm(text: str) -> str:
    return " ".join(text.split())


class QAReader:
    def __init__(self, sets: list[QASet], known: set[str] | None = None) -> None:
        self.questions = [q for s in sets for q in s.questions]
        self.known = known or set()
        self.asked: list[tuple[str, bool]] = []  # (question id, evidence in the prompt)

    def find(self, text: str) -> Question | None:
        """The question asked (its stem and its four options: stems may repeat)."""
        return next((q for q in self.questions if q.question in text
                     and all(f") {o}\n" in f"{text}\n" for o in (q.correct, *q.wrong))),
                    None)

    @staticmethod
    def letter_of(question: Question, text: str) -> str:
        for letter in LETTERS:
            if f"\n{letter}) {question.correct}" in text:
                return letter
        raise AssertionError("the correct option is not among the options asked")

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        last = str(messages[-1]["content"])
        question = self.find(last)
        if question is None:
            return "Noted."
        if "without the repository" in str(messages[0]["content"]):  # contamination check
            letter = self.letter_of(question, last) if question.id in self.known else "A"
            return json.dumps({"answer": letter})
        before = norm("\n".join(str(m["content"]) for m in messages[:-1]))
        seen = bool(question.evidence) and norm(question.evidence) in before
        self.asked.append((question.id, seen))
        if seen:
            return f"Final Answer: {self.letter_of(question, last)}"
        return "I cannot tell from the context I have."
