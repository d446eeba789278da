"""``engram replay build REPO --qa``: questions from the repository's own facts."""

from __future__ import annotations

import json
import re

from replay.cli.command import main
from replay.locoeval import DEMO
from replay.longcodeqa.qa import LETTERS, load_qa
from replay.longcodeqa.qa_build import build_questions
from tests.replay.qa_reader import QAReader

REPO = DEMO / "inventory"


def test_questions_hold_for_the_code_and_their_wrong_options_do_not():
    questions = build_questions(REPO, seed=3, count=40)
    kinds = {q.id.split(":")[0] for q in questions}
    assert {"defines", "raises"} <= kinds
    for q in questions:
        options = [q.correct, *q.wrong]
        assert len(set(options)) == 4, q
        source = (REPO / q.where).read_text()
        assert q.evidence and q.evidence in source, q
        if q.id.startswith("defines:"):
            name = q.question.split("`")[1]
            defines = re.compile(rf"^(?:def |class ){name}\b|^{name} =", re.M)
            assert defines.search((REPO / q.correct).read_text()), q
            assert not any(defines.search((REPO / w).read_text()) for w in q.wrong), q
        if q.id.endswith(":who"):  # which function raises X: only the correct one does
            exc = q.question.split("`")[1]
            for wrong in q.wrong:
                function, path = wrong.split("`")[1], wrong.split("`")[3]
                code = (REPO / path).read_text()
                body = code.split(f"def {function.split('.')[-1]}(", 1)[1].split("\ndef ")[0]
                body = body.split("\n    def ")[0]
                assert f"raise {exc}" not in body, (q.id, wrong)
    # a seed gives the same questions
    assert build_questions(REPO, seed=3, count=40) == questions


def test_build_qa_without_a_model_skips_the_contamination_filter(tmp_path, capsys):
    out = tmp_path / "qa"
    assert main(["build", str(REPO), "--qa", "--out", str(out), "--count", "8"]) == 0
    said = capsys.readouterr().out
    assert "8 questions" in said and "skipped (no --model)" in said
    [path] = list(out.glob("*.json"))
    data = json.loads(path.read_text())
    assert data["build"]["contamination_filter"] == "skipped (no --model)"
    [qa] = load_qa(path)
    assert len(qa.questions) == 8 and (path.parent / qa.repo).resolve() == REPO.resolve()


def test_the_contamination_filter_drops_what_the_model_answers_without_context(
        tmp_path, script, capsys):
    built = build_questions(REPO, seed=0, count=10)
    from replay.longcodeqa.qa import QASet

    known = {built[0].id, built[3].id}
    script.default = QAReader([QASet("x", "", tuple(built))], known=known)
    out = tmp_path / "qa"
    assert main(["build", str(REPO), "--qa", "--out", str(out), "--count", "10",
                 "--model", "scripted/t"]) == 0
    data = json.loads(next(out.glob("*.json")).read_text())
    dropped = set(data["build"]["contamination_filter"]["dropped"])
    # the known ones, and those it guessed right: "A" where the seed put the answer first
    lucky = {q.id for q in built if q.prompt(0)[1] == LETTERS[0]}
    assert dropped == known | lucky
    assert {q["id"] for q in data["questions"]} == {q.id for q in built} - dropped
    assert "answered without context by scripted/t, dropped" in capsys.readouterr().out
