"""Snapshots of the main screen in both themes and of the A/B view.

Regenerate after an intended change: pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from .conftest import ready
from .test_acting import jail
from .test_app import send


async def settle(pilot) -> None:
    await ready(pilot.app, pilot)
    pilot.app.query_one("#prompt").cursor_blink = False
    pilot.app.clear_notifications()
    await pilot.pause(0.3)


def test_main_screen_dark(app_factory, script, snap_compare):
    script.push("Call `migrate(conn, steps)` from **app/db.py**:\n\n```python\n"
                "migrate(conn, [add_users])\n```")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await send(pilot, "how do I run the migrations?")
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(100, 30), run_before=run_before)


def test_main_screen_light(app_factory, script, snap_compare):
    script.push("Use `render_form(form)`.")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await send(pilot, "/theme engram-light")
        await send(pilot, "how is a form rendered?")
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(100, 30), run_before=run_before)


def test_ab_view(app_factory, script, snap_compare):
    script.push("Answer A: use migrate.", "Answer B: no idea.")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await send(pilot, "/ab full empty")
        await send(pilot, "how do I run the migrations?")
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(110, 32), run_before=run_before)


def test_empty_chat_welcome(app_factory, script, snap_compare):
    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(100, 24), run_before=run_before)


def test_sessions_list(app_factory, script, snap_compare, monkeypatch):
    from types import SimpleNamespace

    import tui.screens._sessions as sessions

    # the dates of the sessions (one is the running one): fixed for the picture
    monkeypatch.setattr(sessions, "time", SimpleNamespace(
        strftime=lambda fmt, t: "2025-05-04 10:30", localtime=lambda s: s))
    script.push("Answer A.", "Answer B.")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await send(pilot, "how do I run the migrations?")
        await send(pilot, "/ab full empty")
        await send(pilot, "and the forms?")
        await pilot.press("2")
        await settle(pilot)
        await send(pilot, "/sessions")
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(110, 24), run_before=run_before)


def test_inspector_with_skipped_memory_updates(app_factory, script, snap_compare,
                                                slow_backend):
    script.push("Use `migrate(conn, steps)`.")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await send(pilot, "how do I run the migrations?")
        pilot.app.agent.turns[-1].latency_ms = 120  # the inspector's title: fixed for the picture
        await pilot.press("f2")
        await settle(pilot)

    assert snap_compare(app_factory(backend="slow"), terminal_size=(120, 32),
                        run_before=run_before)


def test_inspector_with_pins(app_factory, script, snap_compare):
    script.push("Call `migrate(conn, steps)`.", "Use `render_form(form)`.", "It is 5 s.")

    async def run_before(pilot) -> None:
        from tui.widgets import SteerList

        await settle(pilot)
        await send(pilot, "how do I run the migrations?")
        await send(pilot, "how is a form rendered?")
        await pilot.press("f4")
        listing = pilot.app.query_one(SteerList)
        for source in ("turn:0", "app/db.py::migrate"):
            listing.highlighted = next(i for i, item in enumerate(listing.items)
                                       if item.source == source)
            await pilot.press("p")
        await send(pilot, "what is the connect timeout?")
        pilot.app.agent.turns[-1].latency_ms = 120  # the inspector's title: fixed
        pilot.app.show_inspector(list(pilot.app.query("TurnView"))[-1])
        await pilot.press("f4")
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(130, 44), run_before=run_before)


def test_ab_turn_after_the_choice(app_factory, script, snap_compare):
    script.push("Answer A: use migrate.", "Answer B: no idea.")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await send(pilot, "/ab full empty")
        await send(pilot, "how do I run the migrations?")
        await pilot.press("1")
        await settle(pilot)

    assert snap_compare(app_factory(), terminal_size=(110, 32), run_before=run_before)


def test_every_snapshot_file_has_its_test():
    """syrupy fails a run on a snapshot no test uses, but not under pytest-xdist (`make test`
    runs with -n auto): the same check, here."""
    from pathlib import Path

    folder = Path(__file__).parent / "__snapshots__" / "test_snapshots"
    tests = {name for name in globals() if name.startswith("test_")}
    files = {path.stem for path in folder.glob("*.svg")}
    assert files and files <= tests, sorted(files - tests)


def test_edit_diff_screen(app_factory, script, snap_compare):
    """Also the README's picture of the edit flow (docs/edit-flow.svg is a copy)."""
    from .test_acting import EDIT, Model, ask, call

    script.default = Model(EDIT, steps=(call("read_file", path="app/db.py", start=1, end=0),))

    async def run_before(pilot) -> None:
        await settle(pilot)
        await ask(pilot, "raise the connect timeout to 10")
        await pilot.pause(0.5)

    assert snap_compare(app_factory(act=True), terminal_size=(100, 36), run_before=run_before)


@jail
def test_consent_screen(app_factory, script, snap_compare, monkeypatch):
    from tui.widgets._task import TaskBar

    from .test_acting import Model, ask, call

    monkeypatch.setattr(TaskBar, "elapsed", property(lambda self: 0.0))  # fixed for the picture
    script.default = Model("done.", steps=(call("run", command="python -m pytest -q"),))

    async def run_before(pilot) -> None:
        await settle(pilot)
        await ask(pilot, "run the tests")
        await pilot.pause(0.5)

    assert snap_compare(app_factory(act=True), terminal_size=(100, 30), run_before=run_before)
