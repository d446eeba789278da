"""``engram memory ingest``: Claude Code and Codex sessions (fixtures in the shapes those
tools write) fed to a backend in the repository's store, incrementally; twice gives the
same memories; a half-written last line is left and taken the next time; secrets never
reach the store; ``auto`` finds the sessions where the tools keep them."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from memory.ingest import IngestOptions, ingest, open_feeder, watch
from memory.ingest.feed import Feeder
from memory.ingest.marks import Marks
from memory.sessions import read_claude, read_codex
from memory.sessions.places import claude_project, find
from tests.conftest import DB, FORMS, make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
SECRETS = ("sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
           "ghp_abcdefghijklmnopqrstuvwxyz0123456789")


def _fixture(name: str, root: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text((FIXTURES / name).read_text().replace("__REPO__", str(root)))
    return dest


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"app/forms.py": FORMS, "app/db.py": DB})


def _feeder(repo: Path, data: Path, backend: str = "cards") -> Feeder:
    return open_feeder(IngestOptions(repo=repo, backend=backend, model="scripted/test",
                                     data_dir=data,
                                     backend_options=(("cards_facts", "said"),)
                                     if backend == "cards" else ()))


async def _memories(repo: Path, data: Path, backend: str) -> dict[str, list[str]]:
    """Each ingested session's memories, read back from the store as a new process would."""
    feeder = _feeder(repo, data, backend)
    found = {}
    for mark in Marks(feeder.env.data_dir).marks.values():
        agent = await feeder._agent(mark, Path(mark.file), mark.tool, read_claude(
            Path(mark.file)) if mark.tool == "claude-code" else read_codex(Path(mark.file)))
        view = getattr(agent.backend, "memory_view", None)
        texts = [text for text, _ in view()] if view else \
            [m.text for m in agent.backend.memory_items()]
        found[mark.session] = sorted(texts)
    feeder.close()
    return found


def test_the_fixtures_read_as_the_tools_wrote_them(tmp_path):
    claude = read_claude(_fixture("claude-code.jsonl", tmp_path, tmp_path / "c.jsonl"))
    assert len(claude.queries) == 4 and all(claude.closed)
    assert claude.answer(0).endswith("change it to timeout=9.")
    assert claude.repo == str(tmp_path)
    assert SECRETS[0] not in claude.queries[1] and "[REDACTED]" in claude.queries[1]
    codex = read_codex(_fixture("codex-rollout.jsonl", tmp_path, tmp_path / "rollout-x.jsonl"))
    assert len(codex.queries) == 3 and all(codex.closed)
    assert codex.answer(1) == "migrate() now checks each table before creating it."


def test_a_rollout_logging_the_user_only_as_events_has_its_answers_and_ends(tmp_path):
    codex = read_codex(_fixture("codex-events.jsonl", tmp_path, tmp_path / "rollout-e.jsonl"))
    assert codex.queries == ["Where is the database opened?", "Make it retry twice."]
    assert codex.answer(0) == "connect() in app/db.py opens it."
    assert codex.answer(1) == "connect() now retries twice before raising."
    assert codex.closed == [True, True]  # task_complete ends the last turn: no settling
    assert codex.calls[0].query == 0 and codex.calls[0].result == "3:def connect(path):\n"


@pytest.mark.parametrize("backend", ["cards", "rag"])
async def test_twice_gives_the_same_memories(backend, repo, tmp_path, script):
    data = tmp_path / "data"
    files = [_fixture("claude-code.jsonl", repo, tmp_path / "s" / "claude.jsonl"),
             _fixture("codex-rollout.jsonl", repo, tmp_path / "s" / "rollout-1.jsonl")]
    feeder = _feeder(repo, data, backend)
    first = await ingest(feeder, files)
    feeder.close()
    assert [r.turns for r in first] == [4, 3] and not any(r.error for r in first)
    assert first[0].tool == "claude-code" and first[1].tool == "codex"
    before = await _memories(repo, data, backend)
    assert len(before) == 2 and all(before.values())
    feeder = _feeder(repo, data, backend)
    again = await ingest(feeder, files)
    feeder.close()
    assert [r.turns for r in again] == [0, 0]
    assert await _memories(repo, data, backend) == before
    sessions = sorted((feeder.env.data_dir / "sessions").glob("ingest-*.jsonl"))
    assert len(sessions) == 2  # one engram session per file, and no more


async def test_a_half_written_last_line_is_left_for_the_next_run(repo, tmp_path, script):
    whole = _fixture("claude-code.jsonl", repo, tmp_path / "whole" / "s.jsonl").read_bytes()
    cut = whole.rstrip(b"\n").rfind(b"\n") + 1 + 40  # into the last line, the last answer
    live = tmp_path / "live" / "s.jsonl"
    live.parent.mkdir()
    live.write_bytes(whole[:cut])
    data = tmp_path / "data"
    feeder = _feeder(repo, data)
    first = await ingest(feeder, [live])
    assert first[0].turns == 3 and first[0].waiting == 1  # the 4th's answer is not there
    mark = feeder.marks.get("cards", live)
    assert whole[mark.offset:].startswith(b'{"parentUuid": "a4"')  # the 4th turn's line
    with live.open("ab") as fh:  # the tool finishes the line
        fh.write(whole[cut:])
    second = await ingest(feeder, [live])
    feeder.close()
    assert second[0].turns == 1 and second[0].waiting == 0
    # the same memories as one run over the whole file
    once = tmp_path / "once"
    once.mkdir()
    (once / "s.jsonl").write_bytes(whole)
    one = _feeder(repo, tmp_path / "data-once")
    await ingest(one, [once / "s.jsonl"])
    one.close()
    assert list((await _memories(repo, data, "cards")).values()) == \
        list((await _memories(repo, tmp_path / "data-once", "cards")).values())


async def test_secrets_in_a_session_never_reach_the_store(repo, tmp_path, script):
    data = tmp_path / "data"
    files = [_fixture("claude-code.jsonl", repo, tmp_path / "s" / "claude.jsonl"),
             _fixture("codex-rollout.jsonl", repo, tmp_path / "s" / "rollout-1.jsonl")]
    assert all(any(s.encode() in f.read_bytes() for s in SECRETS) for f in files)
    for backend in ("cards", "rag", "mem0"):
        feeder = _feeder(repo, data, backend)
        reports = await ingest(feeder, files)
        assert sum(r.turns for r in reports) == 7
        for agent in feeder.agents.values():  # the memory in the process, before any sink
            view = getattr(agent.backend, "memory_view", None)
            held = [t for t, _ in view()] if view else \
                [m.text for m in agent.backend.memory_items()]
            assert held or backend == "mem0"  # the scripted model picked no fact for mem0
            assert not any(s in t for t in held for s in SECRETS)
        feeder.close()
    sent = str(script.calls)  # what mem0's memory calls showed the model
    assert "Our staging key is" in sent and not any(s in sent for s in SECRETS)
    stored = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in stored)
    for path in stored:
        content = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in content, f"{secret[:6]}... in {path}"
    text = "".join(p.read_text() for p in (data.rglob("ingest-*.jsonl")))
    assert "[REDACTED]" in text


async def test_auto_finds_the_sessions_where_the_tools_keep_them(repo, tmp_path, monkeypatch,
                                                                 script):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    root = repo.resolve()
    claude = _fixture("claude-code.jsonl", root,
                      home / ".claude" / "projects" / claude_project(root) / "abc.jsonl")
    _fixture("claude-code.jsonl", tmp_path / "other",
             home / ".claude" / "projects" / claude_project(tmp_path / "other") / "x.jsonl")
    codex = _fixture("codex-rollout.jsonl", root, home / ".codex" / "sessions" / "2025" / "11"
                     / "05" / "rollout-2025-11-05T08-00-00-019a6b10.jsonl")
    _fixture("codex-rollout.jsonl", tmp_path / "other", home / ".codex" / "sessions" / "2025"
             / "11" / "06" / "rollout-2025-11-06T08-00-00-019a6b11.jsonl")
    (root / ".aider.chat.history.md").write_text(
        "# aider chat started at 2025-06-19 14:32:16\n\n#### Use tabs in app/.\n\nOk.\n\n"
        "#### And spaces in tests/.\n\nOk.\n")
    feeder = _feeder(root, tmp_path / "data")
    found = find(root, feeder.env.data_dir)
    assert [(p, t) for p, t in found] == [(claude, "claude-code"), (codex, "codex"),
                                          (root / ".aider.chat.history.md", "aider")]
    os.utime(root / ".aider.chat.history.md", (1, 1))  # long left alone: its last turn too
    reports = await ingest(feeder, None)
    assert [r.turns for r in reports] == [4, 3, 2]
    # engram's own sessions are found too, but never those an ingest wrote
    assert not find(root, feeder.env.data_dir, ("engram",))
    feeder.close()


async def test_watch_follows_a_live_session_and_stops_cleanly(repo, tmp_path, script):
    whole = _fixture("codex-rollout.jsonl", repo, tmp_path / "w" / "x.jsonl").read_bytes()
    lines = whole.splitlines(keepends=True)
    live = tmp_path / "live" / "rollout-live.jsonl"
    live.parent.mkdir()
    live.write_bytes(b"".join(lines[:10]))  # the first turn, closed
    feeder = _feeder(repo, tmp_path / "data")
    stop = asyncio.Event()
    seen = []
    task = asyncio.create_task(watch(feeder, [live], interval=0.05, stop=stop,
                                     report=seen.append))
    for _ in range(400):
        await asyncio.sleep(0.05)
        if sum(r.turns for r in seen) >= 1:
            break
    with live.open("ab") as fh:
        fh.write(b"".join(lines[10:]))
    for _ in range(400):
        await asyncio.sleep(0.05)
        if sum(r.turns for r in seen) >= 3:
            break
    stop.set()
    taken = await asyncio.wait_for(task, 60)
    feeder.close()
    assert taken == 3
    assert Marks(feeder.env.data_dir).get("cards", live).offset == len(whole)


def test_the_command_ingests_and_says_what_it_took(repo, tmp_path, monkeypatch, capsys,
                                                    script):
    from tui.cli import main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = _fixture("claude-code.jsonl", repo, tmp_path / "s" / "claude.jsonl")
    argv = ["memory", "ingest", str(path), "--repo", str(repo), "--model", "scripted/test",
            "--data-dir", str(tmp_path / "data"), "--backend", "rag"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "4 new turn(s) from 1 file(s) into rag" in out
    assert main(argv) == 0
    assert "0 new turn(s)" in capsys.readouterr().out
    assert main(["memory", "ingest", str(tmp_path / "nope.jsonl"), "--repo", str(repo)]) == 2
    assert main([*argv[:3], "auto", *argv[3:]]) == 2  # files or auto, not both


async def test_engrams_own_sessions_are_ingested_too(repo, tmp_path, script):
    from memory.transcript import TranscriptWriter, sessions_dir
    from memory.types import Turn

    feeder = _feeder(repo, tmp_path / "data", "rag")
    own = sessions_dir(feeder.env.data_dir) / "20260101-000000-abcdef.jsonl"
    with TranscriptWriter(own) as writer:
        writer.write({"type": "session", "id": "20260101-000000-abcdef", "repo": str(repo)})
        writer.write(Turn(0, "Dates are stored in UTC.", "Noted.").to_record())
        writer.write(Turn(1, "It failed", "", error="timeout").to_record())  # not a memory
        writer.write(Turn(2, "Use logging in app/.", "Will do.").to_record())
    found = find(repo.resolve(), feeder.env.data_dir, ("engram",))
    assert found == [(own, "engram")]
    reports = await ingest(feeder, None, "engram")
    assert [r.turns for r in reports] == [2]
    texts = [m.text for a in feeder.agents.values() for m in a.backend.memory_items()]
    assert texts == ["Dates are stored in UTC.", "Use logging in app/."]
    # the session it wrote is not taken for one of engram's own the next time
    assert find(repo.resolve(), feeder.env.data_dir, ("engram",)) == [(own, "engram")]
    assert [r.turns for r in await ingest(feeder, None, "engram")] == [0]
    feeder.close()


async def test_two_ingests_at_once_take_each_turn_once(repo, tmp_path, script):
    whole = _fixture("claude-code.jsonl", repo, tmp_path / "w" / "s.jsonl").read_bytes()
    live = tmp_path / "live" / "s.jsonl"
    live.parent.mkdir()
    live.write_bytes(whole[:whole.index(b'{"parentUuid": "a4"')])  # before the 4th turn
    data = tmp_path / "data"
    first, second = _feeder(repo, data, "rag"), _feeder(repo, data, "rag")
    assert [r.turns for r in await ingest(first, [live])] == [3]
    live.write_bytes(whole)
    assert [r.turns for r in await ingest(second, [live])] == [1]  # its marks read again
    assert [r.turns for r in await ingest(first, [live])] == [0]
    texts = [m.text for a in second.agents.values() for m in a.backend.memory_items()]
    assert len(texts) == 4
    first.close()
    second.close()
    assert list((await _memories(repo, data, "rag")).values()) == [sorted(texts)]


def test_auto_never_takes_another_project_whose_path_maps_to_the_same_claude_folder(
        tmp_path, monkeypatch):
    """Claude Code names a project's folder by its path with / and . as -: ``my.app`` and
    ``my-app`` share one. A session whose cwd is the other repository is not this one's."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    mine, theirs = (tmp_path / "my.app").resolve(), (tmp_path / "my-app").resolve()
    mine.mkdir()
    theirs.mkdir()
    folder = home / ".claude" / "projects" / claude_project(mine)
    assert folder.name == claude_project(theirs)
    own = _fixture("claude-code.jsonl", mine, folder / "own.jsonl")
    _fixture("claude-code.jsonl", theirs, folder / "theirs.jsonl")
    assert find(mine, tmp_path / "data", ("claude",)) == [(own, "claude-code")]


async def test_a_backend_failing_on_a_turn_stops_only_its_file(repo, tmp_path, script,
                                                              monkeypatch):
    """The backend raising while a turn is committed: that file is reported and waits
    before the failing turn, the other files go on; the next run takes it from there."""
    from memory.backends.cards.backend import CardsBackend

    data = tmp_path / "data"
    files = [_fixture("claude-code.jsonl", repo, tmp_path / "s" / "claude.jsonl"),
             _fixture("codex-rollout.jsonl", repo, tmp_path / "s" / "rollout-1.jsonl")]
    observe, drain = CardsBackend.observe_many, CardsBackend.drain_records

    async def observe_many(self, turns):
        self.last = turns[-1].user if turns else ""
        await observe(self, turns)

    def failing(self):
        if "Use logging instead of print" in getattr(self, "last", ""):
            raise RuntimeError("the store is read-only")
        return drain(self)

    monkeypatch.setattr(CardsBackend, "observe_many", observe_many)
    monkeypatch.setattr(CardsBackend, "drain_records", failing)
    feeder = _feeder(repo, data)
    first = await ingest(feeder, files)
    assert [r.turns for r in first] == [2, 3] and not first[1].error
    assert "turn 3: memory backend cards failed (RuntimeError: the store is read-only)" \
        in first[0].error
    session = read_claude(files[0])
    assert feeder.marks.get("cards", files[0]).offset == session.starts[2]
    feeder.close()
    monkeypatch.setattr(CardsBackend, "drain_records", drain)
    feeder = _feeder(repo, data)
    again = await ingest(feeder, files)
    feeder.close()
    assert [r.turns for r in again] == [2, 0] and not any(r.error for r in again)
    transcript = data_sessions(feeder, first[0].session)
    assert [t.meta["ingested"]["turn"] for t in transcript.turns] == [0, 1, 2, 3]


def data_sessions(feeder: Feeder, session: str):
    from memory.transcript import read_transcript

    return read_transcript(feeder.env.data_dir / "sessions" / f"{session}.jsonl")


@pytest.mark.parametrize("backend", ["cards", "rag"])
async def test_a_crash_between_a_turns_memory_and_its_mark_repeats_and_loses_nothing(
        backend, repo, tmp_path, script, monkeypatch):
    """The process dying after a turn was committed (recorded, observed) and before its
    mark moved: the next run takes that turn up from the transcript (observed, not recorded
    again) and the memories are those of a run that never stopped."""
    source = _fixture("claude-code.jsonl", repo, tmp_path / "s" / "claude.jsonl")
    clean = tmp_path / "clean"
    feeder = _feeder(repo, clean, backend)
    await ingest(feeder, [source])
    feeder.close()
    put = Marks.put

    class Killed(BaseException):  # not an Exception: nothing in the feeder catches it
        pass

    def dies_on_turn_three(self, mark):
        if mark.turns == 3:
            raise Killed
        put(self, mark)

    data = tmp_path / "data"
    monkeypatch.setattr(Marks, "put", dies_on_turn_three)
    feeder = _feeder(repo, data, backend)
    with pytest.raises(Killed):
        await ingest(feeder, [source])
    feeder.close()
    monkeypatch.setattr(Marks, "put", put)
    feeder = _feeder(repo, data, backend)
    again = await ingest(feeder, [source])
    feeder.close()
    assert [r.turns for r in again] == [2] and not again[0].error
    turns = data_sessions(feeder, again[0].session).turns
    assert [t.meta["ingested"]["turn"] for t in turns] == [0, 1, 2, 3]
    assert list((await _memories(repo, data, backend)).values()) == \
        list((await _memories(repo, clean, backend)).values())


def test_a_sessions_first_lines_are_read_once_for_its_tool_and_its_folder(tmp_path):
    from memory.sessions import sniff
    from memory.sessions.common import head_rows
    from memory.sessions.places import _cwd

    path = _fixture("codex-rollout.jsonl", tmp_path, tmp_path / "rollout-x.jsonl")
    path.write_text('not json\n[1, 2]\n' + path.read_text())
    rows = head_rows(path, 3)
    assert len(rows) == 1 and rows[0]["type"] == "session_meta"  # bad lines passed over
    assert sniff(path) == "codex" and _cwd(path) == str(tmp_path)
    assert head_rows(tmp_path / "gone.jsonl", 3) is None and _cwd(tmp_path / "gone.jsonl") == ""


def _claude_lines(repo: Path, *rows: tuple[str, object, str | None, bool]) -> str:
    """A Claude Code session: (type, content, stop_reason, isSidechain) per line."""
    import json

    out = []
    for n, (kind, content, stop, side) in enumerate(rows):
        row = {"type": kind, "isSidechain": side, "cwd": str(repo), "sessionId": "s-tools",
               "version": "2.0.14", "uuid": f"x{n}"}
        row["message"] = {"role": kind, "content": content} if kind == "user" else \
            {"role": "assistant", "type": "message", "content": content, "stop_reason": stop}
        out.append(json.dumps(row))
    return "\n".join(out) + "\n"


PYTEST_FAILED = "\n".join([
    "=" * 35 + " FAILURES " + "=" * 35,
    "_" * 33 + " test_clean " + "_" * 33,
    "E       ValueError: the name is empty",
    "tests/test_forms.py:4: ValueError",
    "=" * 27 + " short test summary info " + "=" * 28,
    "FAILED tests/test_forms.py::test_clean - ValueError: the name is empty",
    "=" * 25 + " 1 failed, 2 passed in 0.12s " + "=" * 26, ""])


async def test_a_foreign_sessions_tool_calls_are_the_turns_tool_events(repo, tmp_path, script):
    """Claude Code's Bash call and its output reach the backend as engram's own calls do:
    ``cards`` keeps the failing test the run showed."""
    source = tmp_path / "s" / "tools.jsonl"
    source.parent.mkdir()
    source.write_text(_claude_lines(
        repo,
        ("user", "Run the form tests.", None, False),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "Bash",
                        "input": {"command": "pytest -q tests/test_forms.py"}}],
         "tool_use", False),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": PYTEST_FAILED,
                   "is_error": True}], None, False),
        ("assistant", [{"type": "text", "text": "test_clean fails: the name is empty."}],
         "end_turn", False)))
    data = tmp_path / "data"
    feeder = _feeder(repo, data)
    done = await ingest(feeder, [source])
    feeder.close()
    assert done[0].turns == 1 and not done[0].error
    turn = data_sessions(feeder, done[0].session).turns[0]
    call = turn.meta["tools"]["calls"][0]
    assert call["function"] == "Bash"
    assert call["args"] == {"command": "pytest -q tests/test_forms.py"}
    assert call["result"] == PYTEST_FAILED
    texts = " ".join(next(iter((await _memories(repo, data, "cards")).values())))
    assert "test_clean" in texts, texts


def test_claudes_end_turn_closes_a_turn_and_a_sub_agents_does_not(tmp_path):
    """A turn is closed by the developer's assistant's ``end_turn`` (taken at once, no
    settling), not by a sub-agent's (``isSidechain``) nor by a ``tool_use`` stop; an
    interruption and a compaction summary are no question of the developer."""
    path = tmp_path / "c.jsonl"
    path.write_text(_claude_lines(
        tmp_path,
        ("user", "Find the slow query.", None, False),
        ("assistant", [{"type": "text", "text": "Looking."}], "end_turn", True),
        ("assistant", [{"type": "tool_use", "id": "t", "name": "Grep", "input": {}}],
         "tool_use", False)))
    session = read_claude(path)
    assert session.queries == ["Find the slow query."] and session.closed == [False]
    with path.open("a") as fh:
        fh.write(_claude_lines(
            tmp_path,
            ("user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
             None, False),
            ("assistant", [{"type": "text", "text": "It is in app/db.py."}], "end_turn",
             False)))
    session = read_claude(path)
    assert session.queries == ["Find the slow query."] and session.closed == [True]
    assert session.answer(0) == "It is in app/db.py."
