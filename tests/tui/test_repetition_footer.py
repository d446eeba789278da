"""An answer stopped because it repeated itself says so under it."""

from __future__ import annotations

from textual.widgets import Static

from tui.widgets._turn import TurnView

from .conftest import ready
from .test_app import send, until

LOOP = "The price parsing logic is in money.py. It rounds the Decimal to cents. "


async def test_the_footer_says_the_answer_was_stopped_for_repeating(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        script.push("It is in money.py.", LOOP * 10)
        await send(pilot, "what is this?")
        await send(pilot, "Where is the price parsing logic?")
        await until(pilot, lambda: len(app.agent.turns) == 2)
        await until(pilot, lambda: app.query(TurnView)[-1].turn is not None)
        plain, looped = (str(v.query_one(".meta", Static).render()) for v in app.query(TurnView))
        assert "stopped: it repeated itself" in looped
        assert "stopped" not in plain
        assert app.query(TurnView)[-1].answer_text == LOOP.rstrip()
