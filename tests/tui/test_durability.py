"""A corrupted transcript neither stops the app resuming it nor the sessions list."""

from __future__ import annotations

import codecs

import pytest

from tui.screens._sessions import SessionPicker, describe
from tui.session import export_path

from .conftest import ready
from .test_app import send


async def test_resume_and_session_list_survive_a_corrupted_transcript(app_factory, script):
    first = app_factory()
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(first, pilot)
        await send(pilot, "the first question")
        await send(pilot, "the second question")
        path, session = first.agent.transcript.path, first.session_id
    lines = path.read_bytes().split(b"\n")
    bad = [b'{"type":["switch"],"to":"rag"}', b'{"type":"switch","from":"full","to":["rag"]}',
           b'{"type":"turn","index":"7","user":"x"}', b'{"type":"turn","meta":' + b"[" * 5000,
           b"\xff\xfe not utf-8"]
    path.write_bytes(codecs.BOM_UTF8 + b"\n".join(lines[:2] + bad + lines[2:]))
    assert "2 turns" in describe(path) and "5 bad lines skipped" in describe(path)
    again = app_factory(continue_last=True)
    async with again.run_test(size=(120, 40)) as pilot:
        await ready(again, pilot)
        assert again.session_id == session  # the BOM did not drop the session record
        assert [t.user for t in again.agent.turns] == ["the first question",
                                                       "the second question"]
        assert again.agent.backend.name == "full"
        await send(pilot, "/sessions")
        await pilot.pause()
        assert isinstance(again.screen, SessionPicker)


def test_export_default_path_stays_in_the_data_dir(tmp_path):
    assert export_path(tmp_path, "20240101-000000-abcdef") == (
        tmp_path / "sessions" / "20240101-000000-abcdef.md").resolve()
    for bad in ("../../x", "/etc/passwd", "..", "a/b", "", "x\x00y"):
        with pytest.raises(ValueError, match="give /export a path"):
            export_path(tmp_path, bad)
