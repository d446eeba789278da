"""The sandbox's verdicts on generated functions (``replay.locoeval.tasks.Verdicts``):
the same function text for the same sample gets its first run's verdict; any other
text, or other limits, runs again. And the function taken out of an answer whatever its
docstring holds. Real sandbox, real repository."""

from __future__ import annotations

from replay.locoeval.outline import Sample, load_outline
from replay.locoeval.tasks import Verdicts, answer_with, extract_target, run_code
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


# -- code out of answers whatever the docstring holds (mkdocs projects write ```pycon) --
MEAN = '''def mean(values):
    """The arithmetic mean.

    ```pycon
    >>> mean([1, 2])
    1.5
    ```
    """
    if not values:
        raise ValueError("no values")
    return sum(values) / len(values)'''
FLUSH = '''def mean(values):
    """The arithmetic mean.

```pycon
>>> mean([1, 2])
1.5
```
"""
    if not values:
        raise ValueError("no values")
    return sum(values) / len(values)'''
TEST_MEAN = ("import pytest\n\nfrom stats.core import mean\n\n\ndef test_mean():\n"
             "    assert mean([1, 2]) == 1.5\n    with pytest.raises(ValueError):\n"
             "        mean([])\n")


def stats_repo(tmp_path, code: str):
    from tests.conftest import make_repo

    return make_repo(tmp_path / "stats", {
        "stats/__init__.py": "", "stats/core.py": f'"""Statistics."""\n\n\n{code}\n',
        "tests/__init__.py": "", "tests/test_core.py": TEST_MEAN})


def test_a_docstrings_fenced_examples_stay_in_the_function_taken_out_and_graded(tmp_path):
    """The scripted readers' answer (a longer fence, as CommonMark asks) and a model's
    plain ``` fence around examples indented with the function: the whole function."""
    repo = stats_repo(tmp_path, MEAN)
    sample = Sample("s", "stats.core.mean", "stats/core.py", "def mean(values):",
                    ("tests/test_core.py::test_mean",), ())
    written = answer_with(MEAN)
    assert written.startswith("````python\n") and written.endswith("\n````")
    plain = f"Here it is:\n\n```python\nimport math\n\n{MEAN}\n```\n\nIt raises on empty input."
    for answer in (written, plain):
        assert extract_target(answer, "mean") == MEAN
        assert run_code(repo, sample, extract_target(answer, "mean"), Limits(timeout=30))
    method = "class Stats:\n" + "\n".join(f"    {x}" if x else x for x in MEAN.splitlines())
    assert extract_target(f"```python\n{method}\n```", "Stats.mean") == MEAN


def test_examples_written_flush_left_fall_back_to_the_longest_span_that_parses(tmp_path):
    """Fences flush left in the docstring close a plain ``` block early (CommonMark); the
    longest span from the opening fence that parses and defines the function is taken."""
    answer = (f"Sure:\n\n```python\n{FLUSH}\n```\n\nAnd a usage example:\n\n"
              "```python\nmean([3])\n```")
    assert extract_target(answer, "mean") == FLUSH
    repo = stats_repo(tmp_path, FLUSH)
    sample = Sample("s", "stats.core.mean", "stats/core.py", "def mean(values):",
                    ("tests/test_core.py::test_mean",), ())
    assert run_code(repo, sample, extract_target(answer, "mean"), Limits(timeout=30))
