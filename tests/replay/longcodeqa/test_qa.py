"""``qa`` (LongCodeQA): the seeded shuffle, the formats, and accuracy per context bracket."""

from __future__ import annotations

import asyncio
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from replay.cli.command import main
from replay.core.errors import SourceError
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.locoeval import DEMO
from replay.longcodeqa.qa import LETTERS, QAError, Question, load_qa, parse_letter
from replay.reporting.report import summarize, table
from tests.replay.qa_reader import QAReader

DEMO_QA = DEMO / "qa" / "inventory-qa.json"
texts = st.text(min_size=1, max_size=20).filter(str.strip)


@settings(max_examples=30, deadline=None)
@given(qid=texts, options=st.lists(texts, min_size=4, max_size=4, unique=True),
       seed=st.integers(0, 2**32))
def test_the_shuffle_is_seeded_and_keeps_the_options(qid, options, seed):
    question = Question(qid, "Which?", options[0], (options[1], options[2], options[3]))
    order, right = question.options(seed)
    assert question.options(seed) == (order, right)  # same seed, same letters
    assert sorted(order) == sorted(options) and order[right] == options[0]
    text, letter = question.prompt(seed)
    assert f"\n{letter}) {options[0]}" in text


@settings(max_examples=20, deadline=None)
@given(qid=texts)
def test_the_correct_option_is_uniform_over_seeds(qid):
    question = Question(qid, "Which?", "right", ("w1", "w2", "w3"))
    counts = Counter(question.options(seed)[1] for seed in range(2000))
    # 500 expected per position; sd ~19.4: +-100 is five of them
    assert set(counts) == {0, 1, 2, 3}
    assert all(400 <= c <= 600 for c in counts.values()), counts


@pytest.mark.parametrize(("answer", "letter"), [
    ("Final Answer: C", "C"), ("The answer is B", "B"), ("B) because it raises", "B"),
    ("final answer: (d) ValueError", "D"), ("I cannot tell.", None), ("A", "A")])
def test_the_answer_is_read_as_the_paper_reads_it(answer, letter):
    assert parse_letter(answer) == letter


def test_longcodebench_question_files_load(tmp_path):
    issues = {"psf/requests": {
        "101": {"is_qa": True, "question": "What does Session.close do?",
                "correct_answer": "Closes all adapters", "why_is_or_is_not_qa": "",
                "incorrect_answers": ["Nothing", "Deletes cookies", "Ends the process"]},
        "102": {"is_qa": False, "why_is_or_is_not_qa": "a bug fix"}}}
    path = tmp_path / "github_issues_qa.json"
    path.write_text(json.dumps(issues))
    [qa] = load_source(path)
    assert qa.kind == "qa" and qa.repo == "psf/requests"
    assert [q.id for q in qa.questions] == ["psf/requests#101"]
    assert qa.questions[0].correct == "Closes all adapters"
    dataset = [{"prompt": "...", "repo": "psf/requests", "correct_letter": "B",
                "question": "Question:\nWhat does Session.close do?\nA) Nothing\n"
                            "B) Closes all adapters\nC) Deletes cookies\nD) Ends the process\n",
                "repo_text": "Repository:\n", "prompt_goal": "..."}]
    path = tmp_path / "final_dataset.json"
    path.write_text(json.dumps(dataset))
    [qa] = load_source(path)
    question = qa.questions[0]
    assert question.question == "What does Session.close do?"
    assert question.correct == "Closes all adapters"
    assert set(question.wrong) == {"Nothing", "Deletes cookies", "Ends the process"}


@pytest.mark.parametrize("content", [
    '{"kind": "qa", "questions": [{"question": "Q?", "correct": "a", "wrong": ["b", "c"]}]}',
    '{"kind": "qa", "questions": []}',
    '{"kind": "qa", "questions": [{"question": "Q?", "correct": "a", "wrong": ["a", "b", "c"]}]}',
    '{"kind": "qa", "questions": [{"question": "", "correct": "a", "wrong": ["b", "c", "d"]}]}',
    '[{"repo": "x", "question": "Question:\\nQ?\\nA) a\\nB) b", "correct_letter": "A"}]',
    '[{"repo": "x", "question": "Q?\\nA) a\\nB) b\\nC) c\\nD) d", "correct_letter": "E"}]',
    '{"kind": "qa", "questions": [{"question": "Q?", "correct": "a", "wrong": ["b", "c", "d"]',
])
def test_a_corrupt_question_file_gives_a_clear_error(tmp_path, capsys, content):
    path = tmp_path / "questions.json"
    path.write_text(content)
    with pytest.raises(SourceError) as caught:
        load_source(path)
    assert str(path) in str(caught.value)
    with pytest.raises(QAError, match=str(path)):
        load_qa(path)
    code = main([str(path), "--backends", "full", "--model", "scripted/t",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "engram replay:" in err


def run_qa(tmp_path: Path, script, backends: list[str]) -> tuple[list[dict], QAReader]:
    [qa] = load_source(DEMO_QA)
    reader = QAReader([qa])
    script.default = reader
    script.count_prompt = True
    config = ReplayConfig(backends=backends, model="scripted/t", out=tmp_path / "run",
                          max_tokens=128)
    replay = Replay(config)
    try:
        pairs = asyncio.run(replay.run([qa]))
    finally:
        replay.close()
    return pairs, reader


def test_full_accuracy_falls_as_the_bracket_cuts_above_the_answer(tmp_path, script):
    pairs, reader = run_qa(tmp_path, script, ["full"])
    [row] = pairs
    assert row["error"] is None, row["error"]
    brackets = row["qa"]["brackets"]
    accuracy = [brackets[b]["accuracy"] for b in ("1/8", "1/4", "1/2", "all")]
    evidence = [brackets[b]["evidence"] for b in ("1/8", "1/4", "1/2", "all")]
    tokens = [brackets[b]["context_tokens"] for b in ("1/8", "1/4", "1/2", "all")]
    assert accuracy == sorted(accuracy) and accuracy[0] < accuracy[-1]
    assert accuracy[-1] == 1.0  # the whole demo repository fits the scripted window
    assert accuracy == evidence  # the reader answers exactly when the code is shown
    assert tokens == sorted(tokens) and tokens[0] < tokens[-1]
    answers = row["qa"]["answers"]
    # files are sorted by name: a question answered by a late file is the first lost
    lost = {a["question"] for a in answers if a["bracket"] == "1/8" and not a["ok"]}
    assert "text-slug" in lost and "config-low-stock" not in lost
    assert len(reader.asked) == 4 * 10


def test_qa_through_the_cli_writes_results_table_and_chart(tmp_path, script, capsys):
    [qa] = load_source(DEMO_QA)
    script.default = QAReader([qa])
    script.count_prompt = True
    out = tmp_path / "demo-qa"
    code = main(["demo", "qa", "--backends", "full,rag", "--model", "scripted/t",
                 "--out", str(out), "--max-tokens", "128"])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    full, rag = results["backends"]["full"], results["backends"]["rag"]
    assert full["qa_all"] == 1.0 and full["qa_1/8"] < full["qa_all"]
    assert rag["qa_all"] is not None and rag["compression"] > 1.0
    assert "qa: accuracy by context bracket" in capsys.readouterr().out
    console = Console(file=io.StringIO(), width=200)
    console.print(table(summarize(results["runs"])))
    shown = console.file.getvalue()
    assert "acc 1/8 ↑" in shown and "evid. all ↑" in shown and "qa acc ↑" in shown
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # --resume: the finished pairs are not asked again
    calls = len(script.calls)
    code = main(["demo", "qa", "--backends", "full,rag", "--model", "scripted/t",
                 "--out", str(out), "--max-tokens", "128", "--resume"])
    assert code == 0 and len(script.calls) == calls
    letters = {a["correct_letter"] for r in results["runs"] for a in r["qa"]["answers"]}
    assert letters <= set(LETTERS) and len(letters) > 1  # the seed spreads the right option


@pytest.mark.slow
def test_a_question_through_the_embedded_model(tmp_path):
    """The real local/smollm2 answers a demo question at each bracket."""
    from replay.longcodeqa.qa import QASet

    [qa] = load_source(DEMO_QA)
    small = QASet(qa.id, qa.repo, qa.questions[:1], qa.source)
    replay = Replay(ReplayConfig(backends=["full"], model="local/smollm2",
                                 out=tmp_path / "real", max_tokens=8))
    try:
        [row] = asyncio.run(replay.run([small]))
    finally:
        replay.close()
    assert row["error"] is None and row["tokens"] > 0
    brackets = row["qa"]["brackets"]
    assert set(brackets) == {"1/8", "1/4", "1/2", "all"}
    assert all(b["total"] == 1 and 0.0 <= b["accuracy"] <= 1.0 for b in brackets.values())
    assert brackets["1/8"]["context_tokens"] < brackets["all"]["context_tokens"]
