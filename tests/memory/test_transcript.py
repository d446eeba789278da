from __future__ import annotations

import json
import random

from memory.redact import REDACTED, redact
from memory.transcript import TranscriptWriter, read_transcript


def write_sample(path, n=12):
    with TranscriptWriter(path) as writer:
        writer.write({"type": "session", "id": "s1", "repo": "/r", "model": "m"})
        for i in range(n):
            writer.write({"type": "turn", "index": i, "user": f"question {i} é",
                          "assistant": f"answer {i}\nwith lines", "context": []})
            if i % 4 == 3:
                writer.write({"type": "switch", "from": "full", "to": "rag"})
    return path.read_bytes()


def test_round_trip(tmp_path):
    write_sample(tmp_path / "t.jsonl")
    transcript = read_transcript(tmp_path / "t.jsonl")
    assert transcript.problems == []
    assert transcript.session.id == "s1"
    assert [r["index"] for r in transcript.of_type("turn")] == list(range(12))
    assert len(transcript.of_type("switch")) == 3


def test_torn_last_line_is_skipped_with_a_warning(tmp_path):
    data = write_sample(tmp_path / "t.jsonl")
    (tmp_path / "torn.jsonl").write_bytes(data[:-25])
    transcript = read_transcript(tmp_path / "torn.jsonl")
    assert len(transcript.records) == len(read_transcript(tmp_path / "t.jsonl").records) - 1
    assert len(transcript.of_type("turn")) == 12  # the torn one was the last switch
    assert any("torn last line" in p for p in transcript.problems)


def test_resuming_after_a_torn_last_line_keeps_every_new_record(tmp_path):
    data = write_sample(tmp_path / "t.jsonl", n=2)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(data[:-25])  # the last record cut mid-line, as a crash leaves it
    with TranscriptWriter(torn) as writer:
        writer.write({"type": "turn", "index": 2, "user": "u", "assistant": "a", "context": []})
        writer.write({"type": "turn", "index": 3, "user": "u", "assistant": "a", "context": []})
    transcript = read_transcript(torn)
    assert [r["index"] for r in transcript.of_type("turn")] == [0, 2, 3]  # 1 was torn
    assert sum("torn" in p or "line" in p for p in transcript.problems) == 1


def test_random_truncations_and_corruptions_keep_every_intact_record(tmp_path):
    data = write_sample(tmp_path / "t.jsonl")
    original = [line for line in data.split(b"\n") if line]
    rng = random.Random(1234)
    target = tmp_path / "bad.jsonl"
    for trial in range(1000):
        bad = bytearray(data)
        action = trial % 4
        if action == 0:  # truncate anywhere
            bad = bad[: rng.randrange(len(bad))]
        elif action == 1:  # flip random bytes
            for _ in range(rng.randint(1, 6)):
                bad[rng.randrange(len(bad))] = rng.randrange(256)
        elif action == 2:  # splice garbage in
            pos = rng.randrange(len(bad))
            bad[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
        else:  # cut a hole
            pos = rng.randrange(len(bad))
            del bad[pos: pos + rng.randint(1, 80)]
        target.write_bytes(bytes(bad))
        transcript = read_transcript(target)  # must not raise
        lines = bytes(bad).split(b"\n")
        # a line is intact if it is unchanged and ended by a newline (or is the file's end)
        intact = [line for line in lines if line in original]
        kept = [json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()
                for r in (x.data for x in transcript.records)]
        for line in intact:
            assert line in kept, f"trial {trial}: lost an intact record"


def test_secrets_are_redacted(tmp_path, monkeypatch):
    key = "sk-live-abcdefghijklmnop1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok_0123456789abcdef")
    path = tmp_path / "s.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write({"type": "turn", "index": 0, "user": f"my key is {key}",
                      "assistant": "the token tok_0123456789abcdef and ghp_" + "a" * 36,
                      "context": [{"source": key}]})
    text = path.read_text()
    assert key not in text
    assert "tok_0123456789abcdef" not in text
    assert "ghp_" not in text
    assert text.count(REDACTED) == 4


def test_redact_leaves_ordinary_text_alone():
    assert redact("def skip(): return task-list", []) == "def skip(): return task-list"
