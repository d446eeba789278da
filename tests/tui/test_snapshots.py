"""Snapshots of the main screen in both themes and of the A/B view.

Regenerate after an intended change: pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from .conftest import ready
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
