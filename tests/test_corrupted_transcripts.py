"""Corrupted transcripts never take anything down.

Every consumer of a transcript (the reader, resuming a session, the sessions screen's
line, replay's recorded-source loader, the Markdown export of the resumed turns) is run
over a fixed corpus of deterministic corruptions and over hypothesis-generated ones. A
consumer may refuse with its own clear error (``RecordError``, ``SourceError``); any other
exception is a raw one and fails. Every completed, well-formed turn line must still be read.
"""

from __future__ import annotations

import codecs
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory._checks import RecordError
from memory.transcript import TranscriptWriter, read_transcript, resume_from
from memory.types import Turn, Usage
from replay.core.errors import SourceError
from replay.sessions.source import load_recorded
from tui.screens._sessions import describe
from tui.session import export_markdown

CLEAR_ERRORS = (RecordError, SourceError)


def sample_lines() -> list[bytes]:
    """A well-formed session: every record type, A/B meta, usage and context."""
    records: list[dict[str, Any]] = [
        {"type": "session", "id": "20240101-000000-abcdef", "repo": "/r", "head": "0" * 40,
         "engram": "0.1.0", "model": "scripted/t", "backend": "full", "started": 1.7e9}]
    for i in range(6):
        usage = Usage()
        usage.add("answer", 100 + i, 20, 0.001)
        turn = Turn(index=i, user=f"question {i} é", assistant=f"answer {i}\n```py\nx = {i}\n```",
                    backend="full", model="scripted/t", usage=usage, latency_ms=12,
                    started=1.7e9 + i, finished=1.7e9 + i + 1,
                    context=[{"kind": "system", "source": "system", "tokens": 30}])
        if i == 4:
            turn.meta["ab"] = {"backends": ["full", "rag"], "answers": ["a", "b"], "choice": 1}
        records.append(turn.to_record())
        if i == 2:
            records.append({"type": "switch", "from": "full", "to": "rag", "turn": 3})
            records.append({"type": "memory", "backend": "rag", "op": "ADD", "id": "m1",
                            "text": "the developer prefers tabs", "turn": 2})
        if i == 4:
            records.append({"type": "ab", "backends": ["full", "rag"], "answers": ["a", "b"],
                            "choice": 1, "turn": 4})
    return [json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() for r in records]


LINES = sample_lines()
DATA = b"\n".join(LINES) + b"\n"


def exercise(path: Path) -> list[str]:
    """Run every consumer over ``path``; the raw exceptions they raised."""
    def export() -> None:
        export_markdown(resume_from(path).turns, path.with_suffix(".md"))

    raw = []
    steps = (("read", lambda: read_transcript(path)), ("resume", lambda: resume_from(path)),
             ("describe", lambda: describe(path)), ("replay source", lambda: load_recorded(path)),
             ("export", export))
    for name, step in steps:
        try:
            step()
        except CLEAR_ERRORS:
            pass
        except Exception as exc:  # counting exactly these
            raw.append(f"{name}: {type(exc).__name__}: {str(exc)[:100]}")
    return raw


def intact_turns(data: bytes) -> set[int]:
    """Indices of the turn lines ``data`` still holds byte for byte, newline-terminated."""
    lines = data.split(b"\n")
    complete = lines[:-1]  # the last piece has no newline after it: maybe torn
    originals = {line: json.loads(line) for line in LINES}
    return {originals[line]["index"] for line in complete
            if line in originals and originals[line]["type"] == "turn"}


def check(path: Path, data: bytes) -> list[str]:
    path.write_bytes(data)
    raw = exercise(path)
    read = {t.index for t in read_transcript(path).turns}
    lost = intact_turns(data) - read
    return raw + ([f"lost well-formed turns {sorted(lost)}"] if lost else [])


# -- the fixed corpus ------------------------------------------------------------------
def _with_line(line: int, record: Any) -> bytes:
    lines = list(LINES)
    lines[line] = record if isinstance(record, bytes) else json.dumps(record).encode()
    return b"\n".join(lines) + b"\n"


def _field(line: int, key: str, value: Any) -> bytes:
    record = json.loads(LINES[line])
    if value is _DROP:
        record.pop(key, None)
    else:
        record[key] = value
    return _with_line(line, record)


_DROP = object()
SESSION, TURN0, SWITCH, MEMORY, AB = 0, 1, 4, 5, 8
FIELD_CASES: list[tuple[int, str, Any]] = [
    (SESSION, "type", ["session"]), (SESSION, "type", {"a": 1}), (SESSION, "type", None),
    (SESSION, "id", "../../x"), (SESSION, "id", 3), (SESSION, "id", _DROP),
    (SESSION, "id", "/etc/passwd"), (SESSION, "id", "a\x00b"), (SESSION, "started", "today"),
    (SESSION, "started", 1e20), (SESSION, "started", -5), (SESSION, "backend", ["full"]),
    (SESSION, "model", {"m": 1}), (SESSION, "repo", 7),
    (TURN0, "type", ["turn"]), (TURN0, "index", "3"), (TURN0, "index", 1.5),
    (TURN0, "index", -1), (TURN0, "index", True), (TURN0, "index", None),
    (TURN0, "index", 10**12), (TURN0, "index", _DROP), (TURN0, "user", 5),
    (TURN0, "user", None), (TURN0, "user", _DROP), (TURN0, "assistant", ["a"]),
    (TURN0, "usage", "lots"), (TURN0, "usage", {"answer": 3}),
    (TURN0, "usage", {"answer": {"prompt_tokens": "many"}}),
    (TURN0, "usage", {"answer": {"cost": -1}}), (TURN0, "context", "sys"),
    (TURN0, "context", [1, 2]), (TURN0, "context", [{"kind": "x", "source": "y"}]),
    (TURN0, "context", [{"kind": "x", "source": "y", "tokens": "9"}]),
    (TURN0, "meta", []), (TURN0, "meta", {"ab": 3}),
    (TURN0, "meta", {"ab": {"backends": ["a"], "answers": []}}),
    (TURN0, "meta", {"ab": {"backends": ["a"], "answers": ["x"], "choice": 4}}),
    (TURN0, "meta", {"codemem": {"conflicts": 3}}), (TURN0, "started", "noon"),
    (TURN0, "started", 1e300), (TURN0, "finished", [1]), (TURN0, "latency_ms", "fast"),
    (TURN0, "error", 404), (TURN0, "backend", None), (TURN0, "model", 1),
    (SWITCH, "to", ["rag"]), (SWITCH, "to", None), (SWITCH, "to", _DROP),
    (SWITCH, "from", 3), (SWITCH, "turn", "3"), (SWITCH, "type", ["switch", "x"]),
    (MEMORY, "op", 3), (MEMORY, "backend", _DROP), (MEMORY, "text", {"t": 1}),
    (MEMORY, "turn", []), (AB, "choice", 5), (AB, "backends", "ab"),
    (AB, "answers", [1, 2]), (AB, "choice", "1"),
]


def corpus() -> list[tuple[str, bytes]]:
    rng = random.Random(19)
    cases: list[tuple[str, bytes]] = []
    for n, (line, key, value) in enumerate(FIELD_CASES):
        cases.append((f"field {n}: line {line + 1} {key}", _field(line, key, value)))
    for value in ([], 3, "turn", None, [{"type": "turn"}], {"type": "other"}):
        cases.append((f"line 2 is {value!r}", _with_line(TURN0, value)))
    for cut in (1, 10, 57, len(LINES[0]) + 5, len(DATA) // 2, len(DATA) - 2):
        cases.append((f"truncated at {cut}", DATA[:cut]))
    for n in range(12):
        bad = bytearray(DATA)
        for _ in range(rng.randint(1, 5)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        cases.append((f"byte flips {n}", bytes(bad)))
    for n, junk in enumerate((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xfe\xff")):
        pos = rng.randrange(len(DATA))
        cases.append((f"bad utf-8 {n}", DATA[:pos] + junk + DATA[pos:]))
    deep = b'{"type":"turn","index":9,"user":"u","meta":{"x":' + b"[" * 100_000 + b"]" * 100_000
    cases.append(("deep nesting (RecursionError)", DATA + deep + b"}}\n"))
    cases.append(("deep nesting inside a turn", _field(TURN0, "meta", {"x": _nested(60)})))
    cases.append(("deep nesting inside a session", _field(SESSION, "repo", _nested(40))))
    cases.append(("deep nesting, only brackets", DATA + b"[" * 50_000 + b"\n"))
    cases.append(("50 MB line", DATA + b'{"type":"turn","index":9,"user":"'
                  + b"x" * (50 * 1024**2) + b'"}\n'))
    cases.append(("BOM on the first line", codecs.BOM_UTF8 + DATA))
    cases.append(("BOM mid-file", DATA + codecs.BOM_UTF8 + LINES[SWITCH] + b"\n"))
    cases.append(("NaN index", _with_line(TURN0, LINES[TURN0].replace(
        b'"index":0', b'"index":NaN'))))
    cases.append(("Infinity started", _with_line(TURN0, LINES[TURN0].replace(
        b'"started":', b'"started":Infinity,"x":'))))
    cases.append(("huge integer", _with_line(TURN0, LINES[TURN0].replace(
        b'"index":0', b'"index":' + b"9" * 5000))))
    for n in range(5):  # two records run together (a lost newline)
        at = sum(len(line) + 1 for line in LINES[:n + 2]) - 1
        cases.append((f"joined lines {n}", DATA[:at] + DATA[at + 1:]))
    for n in range(6):  # a hole punched anywhere
        pos = rng.randrange(len(DATA))
        cases.append((f"hole {n}", DATA[:pos] + DATA[pos + rng.randint(1, 60):]))
    cases.append(("CRLF line ends", DATA.replace(b"\n", b"\r\n")))
    cases.append(("NUL bytes", DATA.replace(b"question 1", b"question\x001")))
    cases.append(("no session record", b"\n".join(LINES[1:]) + b"\n"))
    cases.append(("empty file", b""))
    cases.append(("only newlines", b"\n\n\n"))
    return cases


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


CORPUS = corpus()


def test_corpus_has_over_100_corruptions():
    assert len(CORPUS) >= 100


def test_no_raw_exception_over_the_corpus(tmp_path, capsys):
    failures = []
    for name, data in CORPUS:
        failures += [f"{name}: {problem}" for problem in check(tmp_path / "s.jsonl", data)]
    clean = len(CORPUS) - len({f.split(":")[0] for f in failures})
    with capsys.disabled():
        print(f"\ncorrupted transcripts read without a raw exception: {clean}/{len(CORPUS)}")
    assert failures == []


def test_bad_records_are_reported_with_their_line_number(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_field(SWITCH, "to", ["rag"]))
    transcript = read_transcript(path)
    assert [p.split(": ", 1)[0] for p in transcript.problems] == [f"{path}:{SWITCH + 1}"]
    assert "'to' must be a string, not list" in transcript.problems[0]
    assert resume_from(path).backend == "full"  # the session's, the bad switch skipped


def test_a_bom_keeps_the_session_record(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + DATA)
    transcript = read_transcript(path)
    assert transcript.problems == []
    assert transcript.session is not None and transcript.session.id == "20240101-000000-abcdef"


def test_a_session_id_that_is_a_path_is_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_field(SESSION, "id", "../../x"))
    transcript = read_transcript(path)
    assert transcript.session is None and "is not a session id" in transcript.problems[0]
    assert resume_from(path).session_id == "s"  # the file's own name
    bad = tmp_path / "..x.jsonl"
    bad.write_bytes(_field(SESSION, "id", "../../x"))
    with pytest.raises(RecordError, match="not a session id"):
        resume_from(bad)


def test_the_writer_output_reads_back_whole(tmp_path):
    path = tmp_path / "w.jsonl"
    with TranscriptWriter(path) as writer:
        for line in LINES:
            writer.write(json.loads(line))
    transcript = read_transcript(path)
    assert transcript.problems == [] and len(transcript.records) == len(LINES)
    assert [t.index for t in transcript.turns] == list(range(6))


# -- hypothesis ------------------------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=4),
    max_leaves=12)
KEYS = st.sampled_from(["type", "id", "index", "user", "assistant", "usage", "context", "meta",
                        "started", "to", "from", "op", "backends", "answers", "choice", "turn"])


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    data = bytearray(DATA)
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "field", "line"]))
        if not data:
            break
        pos = draw(st.integers(0, len(data) - 1))
        if how == "truncate":
            del data[pos:]
        elif how == "flip":
            data[pos] = draw(st.integers(0, 255))
        elif how == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=12))
        elif how == "delete":
            del data[pos:pos + draw(st.integers(1, 80))]
        else:
            lines = bytes(data).split(b"\n")
            n = draw(st.integers(0, len(lines) - 1))
            try:
                record = json.loads(lines[n])
            except ValueError:
                continue
            if how == "field" and isinstance(record, dict):
                record[draw(KEYS)] = draw(JSON)
            else:
                record = draw(JSON)
            lines[n] = json.dumps(record).encode()
            data = bytearray(b"\n".join(lines))
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(data=corrupted())
def test_fuzzed_transcripts_raise_nothing_raw_and_keep_every_intact_turn(tmp_path, data):
    assert check(tmp_path / "f.jsonl", data) == []
