"""LoCoMo's file read as its format says, traps included, and clear errors for bad files."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from replay.benchmark import Benchmarks
from replay.core.errors import SourceError
from replay.core.sources import load_source
from replay.locomo.data import LocomoError, evidence_ids, parse, read

SMALL = Path(__file__).parent / "data" / "locomo-small.json"


def test_the_small_file_reads_in_session_order_with_its_traps():
    first, second = read(SMALL)
    assert (first.id, first.speaker_a, first.speaker_b) == ("conv-t1", "Ana", "Ben")
    assert [s.number for s in first.sessions] == [1, 2, 3]  # keys are out of order
    assert first.sessions[1].date_time == "6:10 pm on 15 May, 2023"
    assert [t.dia_id for t in first.turns()][:3] == ["D1:1", "D1:2", "D1:3"]
    image = first.turn("D2:2")
    assert image is not None and image.caption.startswith("a photo of two green")
    assert image.said().endswith("[shares a photo of: a photo of two green ceramic bowls on "
                                 "a wooden table]")
    assert image.said().startswith('Ana said, "We fired the kiln')
    by = {q.question: q for q in first.questions}
    # category 5's gold is adversarial_answer, even when an empty answer stands beside it
    assert by["What did Ana name her cat?"].answer == "Biscuit"
    assert by["What did Ben bake for the picnic?"].answer == "lemon tart"
    assert by["What year did Ben move to Lisbon?"].answer == "2019"  # a number in the file
    assert by["Would Ana likely enjoy a ceramics museum?"].evidence == ("D1:3", "D2:2")
    assert [q.category for q in second.questions] == [4, 5]
    assert second.questions[1].answer == "a parrot" and second.questions[1].evidence == ()


def test_sessions_are_ordered_by_number_not_by_key():
    turn = {"speaker": "A", "dia_id": "D1:1", "text": "hi"}
    conv = {"speaker_a": "A", "speaker_b": "B"}
    for n in (1, 2, 10):
        conv[f"session_{n}"] = [dict(turn, dia_id=f"D{n}:1")]
        conv[f"session_{n}_date_time"] = f"day {n}"
    [found] = parse([{"sample_id": "s", "conversation": conv, "qa": []}])
    assert [s.number for s in found.sessions] == [1, 2, 10]


def test_evidence_ids_split_a_joined_entry():
    assert evidence_ids(["D8:6; D9:17", "D1:2"]) == ("D8:6", "D9:17", "D1:2")
    assert evidence_ids([]) == ()


def test_the_file_is_claimed_by_its_shape_not_its_name(tmp_path):
    renamed = tmp_path / "conversations.json"
    renamed.write_text(SMALL.read_text())
    bench, _ = Benchmarks().claim(renamed)
    assert bench is not None and bench.name == "locomo"
    assert [s.id for s in load_source(renamed)] == ["conv-t1", "conv-t2"]


def _broken(tmp_path: Path, change) -> Path:
    data = json.loads(SMALL.read_text())
    change(data)
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.mark.parametrize(("change", "said"), [
    (lambda d: d[1]["qa"][0].pop("answer"), "conversation conv-t2, qa[0]: missing field 'answer'"),
    (lambda d: d[0]["qa"][5].pop("adversarial_answer") and d[0]["qa"][5].pop("answer"),
     "conversation conv-t1, qa[5]: missing field 'answer'"),
    (lambda d: d[0]["conversation"].pop("session_2_date_time"),
     "conversation conv-t1, conversation: missing field 'session_2_date_time'"),
    (lambda d: d[0]["conversation"]["session_3"][1].pop("text"),
     "conversation conv-t1, session_3[1]: missing field 'text'"),
    (lambda d: d[1].pop("qa"), "conversation conv-t2: missing field 'qa'"),
    (lambda d: d[1]["conversation"].pop("speaker_b"),
     "conversation conv-t2, conversation: missing field 'speaker_b'"),
    (lambda d: d[0]["qa"][1].update(category=7),
     "conversation conv-t1, qa[1]: field 'category' is 7, not one of 1-5"),
    (lambda d: d[1].pop("sample_id"), "conversation #1: missing field 'sample_id'"),
])
def test_a_missing_field_names_the_conversation_and_the_field(tmp_path, change, said):
    path = _broken(tmp_path, change)
    with pytest.raises(LocomoError) as found:
        read(path)
    assert said in str(found.value) and str(path) in str(found.value)
    with pytest.raises(SourceError, match=r"missing field|not one of"):  # as the CLI loads it
        load_source(path)


def test_a_broken_line_names_its_line_and_the_conversation_around_it(tmp_path):
    lines = json.dumps(json.loads(SMALL.read_text()), indent=1).splitlines()
    at = next(n for n, line in enumerate(lines) if '"dia_id": "D3:2"' in line)
    lines[at + 1] = lines[at + 1].replace('"text":', '"text"')  # a colon lost
    path = tmp_path / "locomo10.json"
    path.write_text("\n".join(lines))
    with pytest.raises(SourceError) as found:
        load_source(path)
    said = str(found.value)
    assert f"line {at + 2}" in said and "broken JSON" in said
    assert "last turn before it: D3:2" in said and "last field before it: 'text'" in said
    assert "conversation conv-t1" in said  # the last sample_id before the break


def test_a_record_that_is_not_an_object_is_named(tmp_path):
    data = json.loads(SMALL.read_text())
    data[0]["conversation"]["session_1"][2] = "just text"
    with pytest.raises(LocomoError, match=r"conversation conv-t1, session_1\[2\]: not a JSON "):
        parse(copy.deepcopy(data), tmp_path / "x.json")


V2 = Path(__file__).parent / "data" / "locomo10_v2"  # locomo10.zip's layout: 3.json, 12.json


def _without_source(conversation):
    return dataclasses.replace(conversation, source=None, id="")


def test_the_per_conversation_folder_reads_as_the_list_file_does():
    by_file = {c.id: c for c in read(SMALL)}
    found = read(V2)
    # by number (3 before 12), named as locomo10.json names them; the same conversations
    assert [c.id for c in found] == ["conv-3", "conv-12"]
    assert [c.source for c in found] == [V2 / "3.json", V2 / "12.json"]
    assert _without_source(found[1]) == _without_source(by_file["conv-t1"])
    assert _without_source(found[0]) == _without_source(by_file["conv-t2"])
    # a date given for a session that has no turns is not a session
    assert [s.number for s in found[1].sessions] == [1, 2, 3]
    assert found[1].questions[5].answer == "Biscuit"  # category 5: adversarial_answer
    [one] = read(V2 / "12.json")
    assert one.id == "conv-12" and _without_source(one) == _without_source(found[1])


def test_the_folder_and_its_files_are_claimed_as_locomo(tmp_path):
    for path in (V2, V2 / "3.json"):
        bench, _ = Benchmarks().claim(path)
        assert bench is not None and bench.name == "locomo", path
    assert [s.id for s in load_source(V2)] == ["conv-3", "conv-12"]
    # a folder of anything else is still LoCoEval's (a folder of outlines) to read
    (tmp_path / "a.json").write_text(json.dumps({"id": "o", "samples": [], "topics": []}))
    bench, _ = Benchmarks().claim(tmp_path)
    assert bench is not None and bench.name == "locoeval"


def test_a_bad_file_in_the_folder_is_named_with_its_field(tmp_path):
    for source in V2.iterdir():
        (tmp_path / source.name).write_text(source.read_text())
    data = json.loads((V2 / "12.json").read_text())
    data["session_2"][0].pop("speaker")
    (tmp_path / "12.json").write_text(json.dumps(data))
    with pytest.raises(SourceError) as found:
        load_source(tmp_path)
    said = str(found.value)
    assert f"{tmp_path / '12.json'}: conversation conv-12, session_2[0]: missing field " \
           "'speaker'" in said
    (tmp_path / "12.json").write_text((V2 / "12.json").read_text())
    (tmp_path / "notes.json").write_text(json.dumps(["not", "a", "conversation"]))
    with pytest.raises(LocomoError, match=r"notes\.json: conversation notes: not a LoCoMo "
                                          r"conversation"):
        read(tmp_path)
    (tmp_path / "notes.json").unlink()
    data.pop("speaker_a")
    (tmp_path / "3.json").write_text(json.dumps(data))
    with pytest.raises(LocomoError, match=r"3\.json: conversation conv-3: missing field "
                                          r"'speaker_a'"):
        read(tmp_path)
