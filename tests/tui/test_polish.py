"""The smaller points: A/B in export and the session list, resume opens on the latest turn
with the session's tokens, the theme lives under ENGRAM_HOME, the welcome text."""

from __future__ import annotations

from tui.screens._sessions import describe
from tui.widgets import StatusBar

from .conftest import ready
from .test_app import send, until


async def test_export_and_session_list_show_ab_turns(app_factory, script, tmp_path):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "first question")
        await send(pilot, "/ab full empty")
        script.push("answer from full", "answer from empty")
        await send(pilot, "which is better?")
        await pilot.press("2")
        await until(pilot, lambda: app.agent.turns[-1].meta.get("ab"))
        await send(pilot, "/backend rag")
        out = tmp_path / "talk.md"
        await send(pilot, f"/export {out}")
        text = out.read_text()
        assert "## Turn 1 · A/B full vs empty" in text
        assert "### A · full\n\nanswer from full" in text
        assert "### B · empty (kept)\n\nanswer from empty" in text
        line = describe(app.agent.transcript.path)
        assert "rag" in line and "2 turns (1 A/B)" in line and "first question" in line
        assert line[:4].isdigit()  # the date


async def test_resume_opens_on_the_latest_turn_with_the_session_tokens(app_factory, script):
    first = app_factory()
    async with first.run_test(size=(120, 24)) as pilot:
        await ready(first, pilot)
        for i in range(6):
            await send(pilot, f"question {i}")
        tokens = first.query_one(StatusBar).session_tokens
    again = app_factory(continue_last=True)
    async with again.run_test(size=(120, 24)) as pilot:
        await ready(again, pilot)
        await pilot.pause(0.3)
        chat = again.query_one("#chat")
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y
        assert again.query_one(StatusBar).session_tokens >= tokens > 0


def test_the_theme_is_saved_under_engram_home(monkeypatch, tmp_path):
    from tui.config import config_path, save_config

    monkeypatch.delenv("ENGRAM_CONFIG", raising=False)
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    save_config(theme="engram-light")
    assert config_path() == tmp_path / "home" / "config.json"
    assert (tmp_path / "home" / "config.json").is_file()


async def test_an_empty_chat_says_what_to_do(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        welcome = str(app.query_one("#welcome").render())
        assert "/backend NAME" in welcome and "F2" in welcome and "Esc" in welcome
        await send(pilot, "a question")
        assert not app.query("#welcome")


