from __future__ import annotations

from pathlib import Path

import pytest

from tui.app import AppOptions, EngramApp


@pytest.fixture
def app_factory(demo_repo: Path, tmp_path: Path, script, monkeypatch):
    monkeypatch.setenv("ENGRAM_CONFIG", str(tmp_path / "config.json"))

    def build(**overrides) -> EngramApp:
        # act=False unless a test asks: the tool loop's steps would take the scripted
        # replies meant for answers (tests/tui/test_acting.py turns it on)
        options = AppOptions(repo=demo_repo, model="scripted/t", data_dir=tmp_path / "data",
                             max_tokens=64, **{"act": False, **overrides})
        return EngramApp(options)

    return build


async def ready(app: EngramApp, pilot) -> None:
    """Wait until the session is open and the index is built."""
    for _ in range(600):
        if app.agent is not None and app.agent.env.repo is not None:
            break
        await pilot.pause(0.05)
    await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.fixture
def slow_backend(monkeypatch):
    """Registers ``slow`` (tests/tui/_slow_backend.py) for the test."""
    from memory.backends import BackendSpec, registry

    monkeypatch.setitem(registry.specs(), "slow",
                        BackendSpec("slow", "tests.tui._slow_backend:SlowBackend", "tests"))
    return "slow"
