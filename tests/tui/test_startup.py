"""Startup: the status bar shows the index's readiness; the embedded model starts
loading in the background at the first keystroke, once, and only for a local model."""

from __future__ import annotations

from dataclasses import replace

from tui.widgets import StatusBar

from .conftest import ready
from .test_app import until


async def test_the_status_bar_shows_when_the_index_is_ready(app_factory):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.query_one(StatusBar)
        assert status.index in ("…", "ready") or status.index.startswith(("reading", "embed"))
        await ready(app, pilot)
        assert status.index == "ready" and app.agent.env.repo is not None
        assert "index ready" in status.render()


async def test_the_first_keystroke_loads_the_local_model_once(app_factory, monkeypatch):
    import memory.llm.local

    loaded: list[str] = []
    monkeypatch.setattr(memory.llm.local, "warm", lambda name="smollm2": loaded.append(name) or 0.0)
    app = app_factory()
    app.options = replace(app.options, model="local/smollm2")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert loaded == []  # nothing typed yet: nothing loaded
        await pilot.press("h", "i")
        await until(pilot, lambda: loaded == ["smollm2"])
        await pilot.press("x")
        await app.workers.wait_for_complete()
        assert loaded == ["smollm2"]
        assert not app.query_one(StatusBar).model_loading


async def test_a_remote_model_is_not_warmed(app_factory, monkeypatch):
    import memory.llm.local

    loaded: list[str] = []
    monkeypatch.setattr(memory.llm.local, "warm", lambda name="smollm2": loaded.append(name) or 0.0)
    app = app_factory()  # scripted/t
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("h", "i")
        await app.workers.wait_for_complete()
        assert loaded == []
