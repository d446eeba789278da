"""The sandbox's verdicts on generated functions (``replay.locoeval.tasks.Verdicts``):
the same function text for the same sample gets its first run's verdict; any other
text, or other limits, runs again. Real sandbox, real repository."""

from __future__ import annotations

from replay.locoeval.outline import load_outline
from replay.locoeval.tasks import Verdicts
from replay.sandbox.sandbox import Limits
from tests.replay.conftest import ANSWERS

WRONG = "```python\ndef with_tax(amount):\n    return amount\n```"


async def test_a_repeated_function_gets_its_first_verdict_without_a_run(outline_file,
                                                                       shop_repo):
    sample = load_outline(outline_file).sample("s1")
    verdicts, limits = Verdicts(), Limits(timeout=30)
    assert await verdicts.verdict(shop_repo, sample, ANSWERS["with_tax"], limits)
    # the same code in other words around it: the same function text, no second run
    said = f"Here it is:\n\n{ANSWERS['with_tax']}\n\nIt rounds with round_cents."
    assert await verdicts.verdict(shop_repo, sample, said, limits)
    assert (verdicts.runs, verdicts.reused) == (1, 1)
    assert not await verdicts.verdict(shop_repo, sample, WRONG, limits)
    assert await verdicts.verdict(shop_repo, sample, ANSWERS["with_tax"], Limits(timeout=20))
    assert (verdicts.runs, verdicts.reused) == (3, 1)
