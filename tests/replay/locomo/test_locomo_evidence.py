"""Evidence recall on a hand-checked context."""

from __future__ import annotations

from pathlib import Path

from memory.types import ContextPack, Section
from replay.locomo.data import Question, read
from replay.locomo.evidence import context_text, context_tokens, recall

SMALL = Path(__file__).parent / "data" / "locomo-small.json"


def test_evidence_recall_on_a_hand_checked_context():
    conv = read(SMALL)[0]
    pack = ContextPack("q", [
        # the system prompt names the pottery turn: it is not memory, it does not count
        Section("system", "system", "I started a pottery class at the community studio "
                "this spring, wheel throwing twice a week.", 30),
        Section("history", "turn:2", 'DATE: 1:56 pm on 8 May, 2023\nAna said, "I started '
                'a pottery class at the community   studio this spring, wheel throwing '
                'twice a week."', 25, role="user"),
        Section("history", "turn:9", 'DATE: 9:02 am on 2 June, 2023\nAna said, "Morning '
                'Ben, how is the band?"', 12, role="user"),
        Section("history", "turn:4", 'Ana said, "Yes!"', 4, role="user"),
    ])
    text = context_text(pack)
    assert context_tokens(pack) == 41
    # D1:3 is there (whitespace differs); D3:2 is not, but D3:1 of its session is;
    # D2:2 is not, nor any turn of session 2; D9:9 is no turn of this conversation
    question = Question(0, "?", "x", ("D1:3", "D3:2", "D2:2", "D9:9"), 1)
    found = recall(conv, question, text)
    assert (found.evidence, found.found, found.session_found, found.unknown) == (3, 1, 2, 1)
    assert found.turn_recall == 1 / 3 and found.session_recall == 2 / 3
    # "Yes!" (D1:5) is in the context but too short to stand for session 1
    only_d16 = Question(1, "?", "x", ("D1:6",), 4)
    assert recall(conv, only_d16, context_text(ContextPack("q", pack.sections[3:]))) \
        .session_found == 0
    assert recall(conv, Question(2, "?", "x", (), 5), text).turn_recall is None


def test_a_phrase_said_in_several_sessions_stands_for_none():
    from replay.locomo.data import parse

    conv = {"speaker_a": "A", "speaker_b": "B"}
    for n in (1, 2):
        conv[f"session_{n}"] = [
            {"speaker": "A", "dia_id": f"D{n}:1", "text": "How has your week been?"},
            {"speaker": "B", "dia_id": f"D{n}:2", "text": f"I moved house in week {n} finally."}]
        conv[f"session_{n}_date_time"] = f"day {n}"
    [found] = parse([{"sample_id": "s", "conversation": conv, "qa": []}])
    question = Question(0, "?", "x", ("D1:2",), 4)
    said = context_text(ContextPack("q", [Section("history", "t", "How has your week been?")]))
    assert recall(found, question, said).session_found == 0  # said in both sessions
    said = context_text(ContextPack("q", [Section("history", "t", "I moved house in week 1 "
                                                  "finally.")]))
    assert recall(found, question, said).session_found == 1


def test_recall_per_question_is_averaged_over_questions_pooled_over_turns():
    from replay.locomo.report import summary

    answers = [{"category": 1, "evidence": 4, "found": 1, "session_found": 1},
               {"category": 1, "evidence": 1, "found": 1, "session_found": 1},
               {"category": 3, "evidence": 0, "found": 0, "session_found": 0}]  # none: out
    row = summary([{"backend": "rag", "seconds": 1.0,
                    "locomo": {"answers": answers, "state_unchanged": True}}])
    one = row["rag"]["by_category"]["1"]
    assert one["recall"] == 2 / 5  # pooled over the evidence turns
    assert one["question_recall"] == (1 / 4 + 1) / 2  # LoCoMo's: a mean over questions
    assert row["rag"]["by_category"]["3"]["question_recall"] is None
