"""The project's instructions in the app: the inspector lists them with their files; when
they pass the room of the context the status bar and the inspector say so (never cut)."""

from __future__ import annotations

from tui.widgets import Inspector, StatusBar

from .conftest import ready
from .test_app import send


async def test_the_inspector_shows_the_instructions_with_their_files(app_factory, script,
                                                                     demo_repo):
    (demo_repo / "AGENTS.md").write_text("Always name the file you change.\n")
    (demo_repo / "app" / "AGENTS.md").write_text("app/ raises AppError.\n")
    app = app_factory()
    async with app.run_test(size=(140, 50)) as pilot:
        await ready(app, pilot)
        await send(pilot, "how does migrate in app/db.py work?")
        await pilot.press("f2")
        await pilot.pause()
        body = str(app.query_one(Inspector).query_one("#inspector-body").render())
        assert "instructions" in body and "project instructions" in body
        assert "app/AGENTS.md" in body and "Always name the file you change." in body
        assert "app/AGENTS.md, AGENTS.md" in body  # nearest first
        assert not app.query_one(StatusBar).instructions


async def test_over_budget_is_said_in_the_status_bar_and_the_inspector(app_factory, script,
                                                                       demo_repo, monkeypatch):
    words = " ".join(f"rule{n}" for n in range(9000))
    (demo_repo / "AGENTS.md").write_text(f"BEGIN {words} END\n")
    app = app_factory()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        await send(pilot, "hello")
        status = app.query_one(StatusBar)
        assert status.instructions.startswith("instructions over by ")
        assert "⚠ instructions over by" in status.render()
        assert [n.title for n in app._notifications].count(
            "project instructions over budget") == 1
        assert f"BEGIN {words} END" in app.agent.last_pack.to_messages()[0]["content"]
        await pilot.press("f2")
        await pilot.pause()
        body = str(app.query_one(Inspector).query_one("#inspector-body").render())
        assert "over budget by" in body and "not cut" in body
