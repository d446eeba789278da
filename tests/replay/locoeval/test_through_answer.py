"""Sample selection's check of the original function through an answer: written as the
scripted readers write it, taken out as grading takes it, graded as a run grades it. A
target that passes is reported so; one whose original cannot be graded is dropped with
why. Real sandbox, real repository, a real build."""

from __future__ import annotations

import json

from replay.locoeval._select import BuildRun, summary, through_answer
from replay.locoeval.build import load_targets
from tests.conftest import make_repo
from tests.replay.conftest import SHOP_FILES

RECEIPT = '''
    def receipt(self):
        """The cart as a printed receipt."""
        rows = "\\n".join(f"{price:.2f} x {qty}" for price, qty in self.lines)
        return f"""RECEIPT
{rows}
TOTAL {self.total():.2f}"""
'''
TEST_RECEIPT = '''

def test_receipt():
    assert Cart([(2.5, 2)]).receipt() == "RECEIPT\\n2.50 x 2\\nTOTAL 6.00"
'''
LEGACY = ('"""Old reports."""\n\n\ndef monthly(rows):\n    """Sum rows by month."""\n'
          '    return sum(rows)\n\n\ndef yearly(rows):\n    """Sum rows by year."""\n'
          '    return sum(rows)\n')


def shop(tmp_path):
    files = dict(SHOP_FILES)
    files["shop/cart.py"] += RECEIPT  # its text lines sit flush left inside the method
    files["tests/test_cart.py"] += TEST_RECEIPT
    files["shop/legacy.py"] = LEGACY  # functions enough for the outline's noise topics
    repo = make_repo(tmp_path / "shop", files)
    path = tmp_path / "targets.json"
    path.write_text(json.dumps([
        {"location": "shop/cart.py::Cart.total",
         "tests": ["tests/test_cart.py::test_total_with_tax"]},
        {"location": "shop/cart.py::Cart.receipt", "tests": ["tests/test_cart.py::test_receipt"]},
    ]))
    return repo, load_targets(path)


def test_the_original_through_an_answer_passes_or_the_target_is_dropped_with_why(tmp_path,
                                                                                  embedder):
    repo, (total, receipt) = shop(tmp_path)
    assert through_answer(repo, total) is None
    why = through_answer(repo, receipt)
    # its text lines keep the method from being dedented, so it goes back indented twice
    assert why == ("the original function taken through an answer fails its tests: put "
                   "back, line 17 of shop/cart.py reads '        def receipt(self):' for "
                   "'    def receipt(self):'")
    report = BuildRun(repo, [total, receipt], tmp_path / "out", seed=1, count=1).run(embedder)
    selection = {v["location"]: v for v in report["selection"]}
    assert selection["shop/cart.py::Cart.total"]["through_answer"] is True
    assert selection["shop/cart.py::Cart.total"]["kept"]
    (dropped,) = report["dropped"]
    assert dropped["location"] == "shop/cart.py::Cart.receipt"
    assert dropped["through_answer"] is False and dropped["reason"] == why
    assert "passes its tests for 1 of 2 targets graded" in "\n".join(summary(report))


def test_a_function_put_back_byte_for_byte_is_graded_too(tmp_path, monkeypatch):
    """The original repository's run had one check test for all the targets; a target's
    own verdict (its tests beside a check test made from one of them) is run even when the
    function goes back byte for byte, and a failure there says it is the grading's."""
    import replay.locoeval.tasks as tasks

    repo, (total, _) = shop(tmp_path)
    graded = []

    def verdict(repo_, sample, code, limits):  # a grading that fails whatever the code
        graded.append((sample.path, sample.function, code))
        return False

    monkeypatch.setattr(tasks, "run_code", verdict)
    why = through_answer(repo, total)
    assert [(p, f) for p, f, _ in graded] == [("shop/cart.py", "Cart.total")]
    assert why == ("the original function, put back byte for byte, fails its verdict in the "
                   "sandbox: the grading, not the code (its check test or its run)")
