"""The LLM judge J of the Mem0 paper (Chhikara et al., 2025), our own prompt: an answer is
CORRECT when it states what the gold answer states, generous on wording, length and date
format (the same day, month or period in another form counts), else WRONG. The verdict
comes back as JSON through ``LLM.complete_json``; an answer with no valid verdict after the
retry is counted as a judge failure (not as WRONG) and left out of J."""

from __future__ import annotations

from typing import Any

from memory.llm.client import LLM, LLMConfig, LLMError, StructuredOutputError

SYSTEM = (
    "You grade answers to questions about a long conversation between two people. You get "
    "the question, the gold answer and a generated answer. The generated answer is CORRECT "
    "when it states the same thing as the gold answer: be generous about wording, length, "
    "extra detail and format. For a time or date, it is CORRECT when it names the same day, "
    "month, year or period as the gold answer, even if written differently or relative to "
    "a session's date. It is WRONG when it states something else, misses the point of the "
    "gold answer, or says it does not know.")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reason": {"type": "string"},
                   "verdict": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
    "required": ["reason", "verdict"],
    "additionalProperties": False,
}


class Judge:
    """J, one verdict per (question, gold, answer), with its own ledger."""

    def __init__(self, model: str, llm: LLM | None = None) -> None:
        self.llm = llm or LLM(LLMConfig(model=model))
        self.failures = 0

    async def verdict(self, question: str, gold: str, answer: str) -> bool | None:
        """True (CORRECT), False (WRONG), None (no valid verdict)."""
        user = (f"Question: {question}\nGold answer: {gold}\nGenerated answer: {answer}\n"
                "Give a one-sentence reason, then the verdict.")
        try:
            data = await self.llm.ask_json(SYSTEM, user, SCHEMA, purpose="judge",
                                           name="verdict", max_tokens=200)
        except (StructuredOutputError, LLMError):
            self.failures += 1
            return None
        return str(data.get("verdict", "")).upper() == "CORRECT"
