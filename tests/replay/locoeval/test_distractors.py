"""Distractors are plain (LoCoEval 3.1.2): a stale version contradicts its true item in
the same frame and never says that it is stale. Checked over many seeds on the demo
repository and on a second real repository (modules of the standard library copied
into a git repository), against a cue lexicon kept HERE, independent of the builder's.
"""

from __future__ import annotations

import re
import shutil
import sysconfig
from collections import Counter
from pathlib import Path

import pytest

from replay.locoeval import DEMO
from replay.locoeval._analyse import Target
from replay.locoeval._contradict import said
from replay.locoeval.build import build_outlines, load_targets, repo_facts
from tests.conftest import make_repo

# words and phrases that tell a reader a statement is not the final one
CUE_LEXICON = (
    "actually", "scratch", "for now", "for the moment", "outdated", "later", "first version",
    "forget", "not:", "instead", "no longer", "change of plan", "changed my mind",
    "temporary", "temporarily", "placeholder", "stub", "earlier", "previous", "previously",
    "initially", "originally", "at first", "to begin with", "correction", "revise",
    "revised", "update", "updated", "stale", "draft", "tbd", "todo", "eventually",
    "in the future", "real logic", "the opposite", "nevermind", "never mind", "ignore",
    "wait", "rather", "new plan", "old plan", "on second thought", "obsolete", "deprecated",
    "tentative", "provisional", "for a start", "to start with", "as a start", "come back",
    "revisit", "swallowed", "no need to check", "skip the", "drop the", "replaced",
    "replaces", "we said", "i said", "before we", "until", "interim", "quick hack",
    "simplest version", "v1", "mvp", "not final", "final version", "last time", "redo",
)
CUE = re.compile(r"(?<![\w-])(" + "|".join(re.escape(c) for c in CUE_LEXICON) + r")(?![\w-])",
                 re.I)

DEMO_REPO = DEMO / "inventory"
DEMO_TARGETS = load_targets(DEMO / "targets.json")
STDLIB_MODULES = ("statistics", "textwrap", "heapq", "bisect", "fractions", "shlex")
STDLIB_TARGETS = (
    "statistics.py::mean", "statistics.py::median", "statistics.py::median_low",
    "statistics.py::mode", "statistics.py::multimode", "statistics.py::quantiles",
    "statistics.py::variance", "statistics.py::harmonic_mean", "textwrap.py::dedent",
    "textwrap.py::shorten", "textwrap.py::indent", "heapq.py::nlargest", "heapq.py::merge",
    "shlex.py::split", "fractions.py::Fraction.limit_denominator",
)
DESCRIPTIONS = ("core_functionality", "logical_constraint")


def cues(text: str) -> list[str]:
    """The cue words of a statement's prose (code in backquotes is a name, not a cue)."""
    return CUE.findall(re.sub(r"`[^`]*`", "", text))


@pytest.fixture(scope="module")
def stdlib_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second real repository: modules of this interpreter's standard library."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    root = tmp_path_factory.mktemp("stdlib")
    files = {f"lib/{name}.py": (stdlib / f"{name}.py").read_text("utf-8")
             for name in STDLIB_MODULES}
    repo = make_repo(root / "repo", {"lib/__init__.py": "", **files})
    shutil.rmtree(repo / "lib" / "__pycache__", ignore_errors=True)
    return repo


def stdlib_targets() -> list[Target]:
    return [Target(f"lib/{loc.split('::')[0]}", loc.split("::")[1], ("tests/test_lib.py",))
            for loc in STDLIB_TARGETS]


def distractors(repo: Path, targets: list[Target], seeds: range, count: int = 16):
    """(distractor item, the true item of its unit, the sample's function) over seeds."""
    facts = repo_facts(repo)
    for seed in seeds:
        for data in build_outlines(repo, targets, count, seed, grid=True, facts=facts):
            for sample in data["samples"]:
                truths = {i["unit"]: i for i in sample["items"] if i["truth"]}
                qual = sample["namespace"].removeprefix(
                    sample["path"].removesuffix(".py").replace("/", ".") + ".")
                for item in sample["items"]:
                    if not item["truth"]:
                        yield item, truths[item["unit"]], qual


def check_plain(found: list) -> Counter:
    kinds: Counter = Counter()
    for item, truth, qual in found:
        kinds[item["type"]] += 1
        assert not cues(item["text"]), (item["text"], cues(item["text"]))
        assert item["text"] != truth["text"]
        assert f"`{qual}`" in item["text"], item["text"]  # about the same function
        if item["type"] == "core_functionality":  # the same frame as its true item
            assert item["text"].startswith(f"`{qual}` should: ")
        if item["type"] == "logical_constraint":
            assert item["text"].startswith(f"For `{qual}`: ")
        if item["type"] == "parameter_list":
            assert item["text"].startswith(f"`{qual}` takes (")
            shown = item["text"].split(" takes (", 1)[1].removesuffix(").")
            compile(f"def f({shown}):\n    pass\n", "variant", "exec")  # a valid signature
    return kinds


def test_the_lexicon_catches_the_old_cue_phrasings():
    """The test can fail: every cue phrasing the builder used to write is caught."""
    old = ("`f` should, for a first version, only validate its input and return None.",
           "`f` should return its input unchanged; the real logic comes later.",
           "Scratch that for `f`: the opposite holds. Not: it sorts.",
           "For `f`, forget this rule for now: it sorts.",
           "Earlier plan for `f`, now outdated: it sorts.",
           "For `f`: no need to check anything here, callers validate their input.",
           "For `f`: errors are logged and swallowed, never raised.",
           "Actually, `f` sorts.", "Change of plan: `f` sorts.")
    assert all(cues(text) for text in old)
    assert not cues("`later_than` should reuse `replace` from `lib/x.py`.")  # names


def test_no_distractor_carries_a_revision_cue_on_the_demo():
    kinds = check_plain(list(distractors(DEMO_REPO, DEMO_TARGETS, range(12))))
    assert set(kinds) == {"function_location", "parameter_list", "core_functionality",
                          "logical_constraint", "internal_dependency", "external_dependency"}


def test_no_distractor_carries_a_revision_cue_on_a_second_repository(stdlib_repo):
    kinds = check_plain(list(distractors(stdlib_repo, stdlib_targets(), range(8))))
    assert kinds["core_functionality"] > 20 and kinds["logical_constraint"] > 5


def _code_blind(text: str) -> str:
    return re.sub(r"`[^`]*`", "`x`", text)


def test_description_distractors_contradict_from_the_truth_or_another_real_function(
        stdlib_repo):
    """Negation or a value of the truth swapped where one applies; else a requirement of
    another real function of the repository, restated about the target."""
    how: Counter = Counter()
    for repo, targets in ((DEMO_REPO, DEMO_TARGETS), (stdlib_repo, stdlib_targets())):
        facts = repo_facts(repo)
        theirs = {_code_blind(s) for fn in facts.functions for s in said(facts, fn)}
        for item, truth, _ in distractors(repo, targets, range(4)):
            if item["type"] not in DESCRIPTIONS:
                continue
            claim, true_claim = (t.split(": ", 1)[1] for t in (item["text"], truth["text"]))
            words, true_words = claim.split(), true_claim.split()
            if claim.replace("Never raises", "Raises").replace("never raises", "raises") \
                    == true_claim or (len(words) == len(true_words) and sum(
                    a != b for a, b in zip(words, true_words, strict=True)) <= 3):
                how["from the truth"] += 1
            elif _code_blind(claim) in theirs:
                how["borrowed"] += 1
            else:
                how["other"] += 1
    assert how["from the truth"] > 20 and how["borrowed"] > 20, how
    assert how["other"] < 0.1 * sum(how.values()), how


def test_value_swaps_and_negations_are_taken_from_the_truth():
    from replay.locoeval._contradict import negate, swaps

    assert negate("Raises ValueError when n is negative.") == \
        "Never raises ValueError when n is negative."
    assert negate("Items with at most n elements.", ["n"]) == "Items with at least n elements."
    errors = ["InventoryError", "ValueError", "TypeError"]
    found = swaps("Raises ValueError after 3 retries, sorted by name then age, as a list.",
                  ["name"], errors)
    assert "Raises InventoryError after 3 retries, sorted by name then age, as a list." in found
    assert "Raises ValueError after 6 retries, sorted by name then age, as a list." in found
    assert "Raises ValueError after 3 retries, sorted by name then age, as a tuple." in found
    assert "Raises ValueError before 3 retries, sorted by name then age, as a list." in found
    # code, quoted text and parameter names are never rewritten
    assert swaps("Returns `first(xs, 2)` for 'list' input start.", ["start"], errors) == []


def test_a_relative_import_is_the_repository_s_own():
    from replay.locoeval._analyse import imports

    found = imports(b"from .recipes import flatten\nfrom os.path import join\nimport re\n",
                    {"pkg"})
    assert found == {"join": "os.path", "re": "re"}
