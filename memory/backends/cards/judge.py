"""The optional revision judge of ``cards``: a model confirms an uncertain revision.

The cue-free rules (``revise``) are sure of a restated value or a slot set
again; a later description of the same aspect, or a later dependency close to an
earlier one, is a guess. With ``cards_judge=llm`` the answer model is asked, through
the structured-output path, whether the later statement replaces the earlier or adds to
it; "adds" keeps both. A call that fails leaves the rule's decision (counted). Off by
default: it costs a call per uncertain revision, and a model as small as the embedded
one judges worse than the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.llm.client import LLMError
from memory.llm.lenient_json import MalformedJSON

if TYPE_CHECKING:
    from memory.llm.client import LLM

JUDGES = ("off", "llm")

JUDGE_PROMPT = """You keep the decision memory of a coding assistant. The developer said
two things about the same part of the code, in this order. Decide whether the later
statement REPLACES the earlier one (it changes, corrects or contradicts it, so the
earlier no longer holds) or ADDS to it (both hold at once, e.g. two different
requirements, or two dependencies the code uses together). Answer as JSON:
{"verdict": "replaces"} or {"verdict": "adds"}."""
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["replaces", "adds"]}},
    "required": ["verdict"],
    "additionalProperties": False,
}


@dataclass
class JudgeStats:
    asked: int = 0
    confirmed: int = 0
    rejected: int = 0
    failed: int = 0  # no valid answer: the rule's decision stood


class RevisionJudge:
    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.stats = JudgeStats()

    async def replaces(self, subject: str, earlier: str, later: str) -> bool | None:
        """Whether ``later`` replaces ``earlier`` (None when the model gave no valid answer)."""
        self.stats.asked += 1
        user = (f"About: {subject or 'the code'}\nEarlier: {earlier[:1200]}\n"
                f"Later: {later[:1200]}\nAnswer:")
        try:
            value = await self.llm.ask_json(JUDGE_PROMPT, user, JUDGE_SCHEMA,
                                            name="revision", max_tokens=20)
        except (MalformedJSON, LLMError):
            self.stats.failed += 1
            return None
        verdict = value.get("verdict") if isinstance(value, dict) else None
        if verdict not in ("replaces", "adds"):
            self.stats.failed += 1
            return None
        if verdict == "replaces":
            self.stats.confirmed += 1
            return True
        self.stats.rejected += 1
        return False
