"""LoCoMo end to end on the small file: sessions fed in order, questions asked with
commit=False and scored; reader-free through the CLI with no model call; the per-category
table; and one run on the real embedded model (slow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory.transcript import read_transcript
from replay.cli.command import main
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.reporting.report import summarize

SMALL = Path(__file__).parent / "data" / "locomo-small.json"


def reply(messages: list[dict[str, Any]]) -> str:
    system, asked = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You grade answers"):
        gold = asked.split("Gold answer: ")[1].split("\n")[0]
        given = asked.split("Generated answer: ")[1].split("\n")[0]
        verdict = "CORRECT" if gold == given else "WRONG"
        return json.dumps({"reason": "compared", "verdict": verdict})
    if "Select the correct answer" in asked:
        return "Not mentioned in the conversation"
    return "pottery"


async def test_sessions_are_fed_in_order_and_questions_leave_memory_as_it_was(
        tmp_path, script, embedder):
    script.default = reply
    config = ReplayConfig(backends=["full", "rag"], model="scripted/t", out=tmp_path / "run",
                          judge_model="scripted/judge", max_tokens=32, window=0)
    replay = Replay(config, embedder=embedder)
    try:
        pairs = await replay.run(load_source(SMALL)[:1])
    finally:
        replay.close()
    assert {(p["source"], p["backend"]) for p in pairs} == {("conv-t1", "full"),
                                                            ("conv-t1", "rag")}
    for row in pairs:
        found = row["locomo"]
        assert row["error"] is None and row["kind"] == "locomo"
        assert found["state_unchanged"] is True and found["reader_free"] is False
        assert (found["turns"], found["sessions"], found["questions"]) == (12, 3, 7)
        answers = {a["question"]: a for a in found["answers"]}
        assert answers["q0"]["score"] == 1.0 and answers["q0"]["j"] is True  # pottery
        assert answers["q3"]["score"] == 0.0 and answers["q3"]["j"] is False  # 2019
        assert answers["q5"]["score"] == 1.0 and "j" not in answers["q5"]  # 5: not judged
        assert answers["q6"]["unknown_evidence"] == 1 and answers["q6"]["evidence"] == 0
        assert row["judge_tokens"] > 0
    full = {a["question"]: a for a in next(p for p in pairs if p["backend"] == "full")
            ["locomo"]["answers"]}
    assert all(a["found"] == a["evidence"] for a in full.values())  # unbounded: all there
    # the transcript holds the fed turns only, in session order, dated, speakers named
    turns = read_transcript(tmp_path / "run" / "conversations" / "conv-t1__full.jsonl")
    users = [t["user"] for t in turns.of_type("turn")]
    assert len(users) == 12
    assert users[0] == 'DATE: 1:56 pm on 8 May, 2023\nAna said, "Hey Ben, long time no talk!"'
    assert users[6].startswith("DATE: 6:10 pm on 15 May, 2023\nBen said")  # session 2 next
    assert users[7].endswith("[shares a photo of: a photo of two green ceramic bowls on a "
                             "wooden table]")
    # asked against the memory after the last session: the system prompt names the speakers
    asked = [m for m in script.calls if m[0]["content"].startswith("You answer questions")]
    assert len(asked) == 14 and "between Ana and Ben" in asked[0][0]["content"]
    summary = summarize(pairs)
    rows = summary["locomo"]["full"]["by_category"]
    assert set(rows) == {"1", "2", "3", "4", "1-4", "5"}
    assert rows["5"]["f1"] == 1.0 and rows["1-4"]["questions"] == 5
    assert rows["4"]["j"] == 0.5  # pottery right, 2019 wrong


def test_reader_free_runs_offline_through_the_cli(tmp_path, script, capsys):
    out = tmp_path / "rf"
    code = main([str(SMALL), "--reader-free", "--backends", "full,rag,mask,cards",
                 "--backend-opt", "cards_facts=said", "--model", "scripted/t",
                 "--out", str(out), "--window", "4096"])
    assert code == 0
    assert script.calls == []  # no model was asked anything: no answer, no memory call
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["reader_free"] == "True"
    locomo = results["locomo"]
    assert set(locomo) == {"full", "rag", "mask", "cards"}
    for name, per in locomo.items():
        assert per["conversations"] == 2 and per["reader_free"] and per["unchanged"], name
        assert all(row.get("f1") is None for row in per["by_category"].values())
        overall = per["by_category"]["1-4"]
        assert overall["context_tokens"] > 0 and 0.0 <= overall["recall"] <= 1.0
    assert locomo["full"]["by_category"]["1-4"]["recall"] == 1.0
    assert locomo["full"]["by_category"]["1-4"]["question_recall"] == 1.0
    rag = locomo["rag"]["by_category"]["1"]  # one multi-hop question per conversation
    pooled = rag["recall"]
    assert rag["question_recall"] is not None and 0.0 <= pooled <= 1.0
    shown = capsys.readouterr().out
    assert "LoCoMo by category" in shown and "ev. recall" in shown
    # `engram replay report` shows the same table from the run folder
    assert main(["report", str(out), "--out", str(tmp_path / "merged")]) == 0
    assert "LoCoMo by category" in capsys.readouterr().out


def test_questions_takes_the_first_n_and_answers_are_capped_as_locomo_asks(tmp_path, script):
    """--questions N asks each conversation's first N questions after feeding all of it;
    an answer gets LoCoMo's 32 tokens (its evaluation's num_tokens_request), or fewer by
    --max-tokens; a cap that is no whole number of questions is refused."""
    script.default = reply
    out = tmp_path / "q"
    assert main([str(SMALL), "--backends", "full", "--questions", "2", "--model",
                 "scripted/t", "--out", str(out)]) == 0  # --max-tokens: 512 by default
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    turns = {c.id: len(c.turns()) for c in load_source(SMALL)}
    assert len(rows) == 2
    for row in rows:
        found = row["locomo"]
        assert found["questions"] == 2 and found["answer_tokens"] == 32
        assert found["turns"] == turns[row["source"]]  # the whole conversation fed
        assert [a["question"] for a in found["answers"]] == ["q0", "q1"]
    assert len(script.calls) == 4
    low = tmp_path / "low"
    assert main([str(SMALL), "--backends", "full", "--limit", "1", "--reader-free",
                 "--max-tokens", "16", "--model", "scripted/t", "--out", str(low)]) == 0
    row = json.loads((low / "pairs.jsonl").read_text())
    assert row["locomo"]["answer_tokens"] == 16 and row["locomo"]["questions"] == 7
    with pytest.raises(SystemExit) as exc:
        main([str(SMALL), "--questions", "0", "--out", str(tmp_path / "none")])
    assert exc.value.code == 2


def test_the_table_says_when_a_memory_changed_under_its_questions():
    summary = {"locomo": {"x": {"conversations": 1, "seconds": 1.0, "reader_free": True,
                                "unchanged": False, "unknown_evidence": 0,
                                "by_category": {"4": {"questions": 1, "recall": 1.0}}}}}
    from rich.console import Console

    console = Console(record=True, width=200)
    from replay.benchmark import benchmarks

    for part in benchmarks.get("locomo").report(summary):
        console.print(part)
    assert "the memory of x changed" in console.export_text()


@pytest.mark.slow
def test_one_conversation_on_the_embedded_model(tmp_path, capsys):
    out = tmp_path / "run"
    code = main([str(SMALL), "--backends", "full,rag,cards", "--limit", "1",
                 "--model", "local/smollm2", "--max-tokens", "24", "--out", str(out)])
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert code == 0 and {r["backend"] for r in rows} == {"full", "rag", "cards"}
    for row in rows:
        assert row["error"] is None and row["locomo"]["questions"] == 7
        assert row["locomo"]["state_unchanged"] is True
        assert all(0.0 <= a["score"] <= 1.0 for a in row["locomo"]["answers"])
    assert "LoCoMo by category" in capsys.readouterr().out


@pytest.mark.slow
async def test_the_judge_on_the_embedded_model_gives_parsed_verdicts():
    """J through the structured-output path of the embedded model: a verdict parses (the
    135M model's judgement itself is not what is tested)."""
    from replay.locomo.judge import Judge

    judge = Judge("local/smollm2")
    verdict = await judge.verdict("When did Ana's first kiln firing happen?", "14 May 2023",
                                  "On the 14th of May, 2023.")
    assert verdict in (True, False) and judge.failures == 0
    assert judge.llm.stats.parsed == 1
