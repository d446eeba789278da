"""Sources: CodeIF-Bench's JSONL as published, our iterative JSON, transcripts, outlines."""

from __future__ import annotations

import json

import pytest

from memory.transcript import TranscriptWriter
from memory.types import Turn
from replay.codeif.source import Iterative
from replay.core.errors import SourceError
from replay.core.sources import load_source
from replay.locoeval.outline import Outline
from replay.sessions.source import Recorded

CODEIF_TASK = {
    "task_id": "codeif/1",
    "prompt": "Write a function add(a, b) that returns a + b.",
    "test": ["assert add(1, 2) == 3"],
    "code": "def add(a, b):\n    return a + b",
    "requirements": {
        "Input-Output Conditions": {"requirement": "add must reject None with TypeError.",
                                    "unit_test": ["try:\n    add(None, 1)\nexcept TypeError:\n"
                                                  "    pass\nelse:\n    raise AssertionError"]},
        "Code Standard": {"requirement": "Follow PEP 8.", "unit_test": ["assert True"]},
    },
    "multi-turn": ["Input-Output Conditions", "Code Standard"],
}


def test_codeif_jsonl_loads_as_published(tmp_path):
    path = tmp_path / "codeif.jsonl"
    path.write_text(json.dumps(CODEIF_TASK) + "\n" + json.dumps({**CODEIF_TASK,
                                                                 "task_id": "codeif/2"}) + "\n")
    tasks = load_source(path)
    assert [t.id for t in tasks] == ["codeif/1", "codeif/2"]
    task = tasks[0]
    assert isinstance(task, Iterative)
    assert [s.instruction for s in task.steps] == [
        CODEIF_TASK["prompt"], "add must reject None with TypeError.", "Follow PEP 8."]
    assert task.steps[0].tests == ("assert add(1, 2) == 3",)
    assert task.steps[2].tests == ("assert True",)


def test_codeif_line_missing_a_category_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**CODEIF_TASK, "multi-turn": ["Nope"]}) + "\n")
    with pytest.raises(SourceError, match="not a CodeIF-Bench task"):
        load_source(path)


def test_own_iterative_json_and_recorded_transcript(tmp_path, outline_file):
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"tasks": [{"id": "x", "turns": [
        {"instruction": "write f", "tests": ["assert f() == 1"]}]}]}))
    assert load_source(own)[0].steps[0].tests == ("assert f() == 1",)

    path = tmp_path / "s.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write({"type": "session", "id": "abc", "repo": "/r"})
        for i, q in enumerate(["first question", "second question"]):
            writer.write(Turn(i, q, "answer").to_record())
    with path.open("a") as fh:
        fh.write('{"type": "turn", "index": 2, "user": "torn')
    recorded = load_source(path)[0]
    assert isinstance(recorded, Recorded)
    assert recorded.id == "abc" and recorded.queries == ("first question", "second question")

    assert isinstance(load_source(outline_file)[0], Outline)
    with pytest.raises(SourceError, match="no such file"):
        load_source(tmp_path / "missing.json")
    (tmp_path / "junk.json").write_text('{"hello": 1}')
    with pytest.raises(SourceError, match="neither"):
        load_source(tmp_path / "junk.json")
