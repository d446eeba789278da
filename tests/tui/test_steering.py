"""Steering from the inspector (F4; p pin, d forget, e edit): the next context changes,
the transcript records it, and it survives resume and a backend's catch-up."""

from __future__ import annotations

import json

from memory.transcript import read_transcript
from memory.turn.steering import user_ops
from tui.screens import ConfirmScreen, EditScreen
from tui.widgets import Inspector, SteerList

from .conftest import ready
from .test_app import send, until

DATES, CLI = "Dates are stored in UTC.", "The CLI is called engram."


def facts(*texts: str) -> list[str]:
    """The scripted mem0 replies for a turn whose facts are all added."""
    return [json.dumps({"facts": list(texts)}),
            json.dumps({"operations": [{"fact": i, "op": "ADD", "memory": -1, "text": ""}
                                       for i in range(len(texts))]})]


async def steer(pilot, source: str, key: str) -> None:
    """Highlight the item ``source`` in the next-context list and press ``key``."""
    await pilot.press("f4")
    await pilot.pause()
    listing = pilot.app.query_one(SteerList)
    assert listing.has_focus
    [index] = [i for i, item in enumerate(listing.items) if item.source == source]
    listing.highlighted = index
    await pilot.press(key)
    await pilot.pause()


def memory_texts(app, turn) -> list[str]:
    pack = app.agent.last_pack
    assert pack.query == turn
    return [s.text for s in pack.of_kind("memory")]


async def test_pin_forget_edit_change_the_next_context_and_are_recorded(app_factory, script):
    script.push("Noted.", *facts(DATES, CLI))
    app = app_factory(backend="mem0")
    async with app.run_test(size=(140, 44)) as pilot:
        await ready(app, pilot)
        await send(pilot, "Dates are stored in UTC. The CLI is called engram.")
        dates, cli = app.agent.backend.memory_items()

        await steer(pilot, dates.id, "p")
        listing = app.query_one(SteerList)
        assert [i.source for i in listing.items if i.pinned] == [dates.id]
        assert "p pin/unpin" in str(app.query_one("#steer-keys").render())

        await steer(pilot, cli.id, "d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: cli.id not in {m.id for m in app.agent.backend.memory_items()})

        await steer(pilot, dates.id, "e")
        assert isinstance(app.screen, EditScreen)
        app.screen.query_one("#memory-text").load_text("Dates are stored in UTC, offsets kept.")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.agent.backend.memory_items()[0].text.endswith("kept."))

        script.push("Sure.", json.dumps({"facts": []}))
        await send(pilot, "what about the logs?")
        assert memory_texts(app, "what about the logs?") == [
            "- Dates are stored in UTC, offsets kept."]
        turn = app.agent.turns[-1]
        assert {"kind": "memory", "source": dates.id, "pinned": True}.items() <= \
            next(c for c in turn.context if c["source"] == dates.id).items()
        records = user_ops(read_transcript(app.agent.transcript.path).of_type("memory"))
        assert [(r["op"], r["id"], r["by"]) for r in records] == [
            ("pin", dates.id, "user"), ("forget", cli.id, "user"), ("edit", dates.id, "user")]

    again = app_factory(continue_last=True)
    async with again.run_test(size=(140, 44)) as pilot:
        await ready(again, pilot)
        assert again.agent.steering.pinned(dates.id)
        assert [(m.id, m.text) for m in again.agent.backend.memory_items()] == [
            (dates.id, "Dates are stored in UTC, offsets kept.")]
        await pilot.press("f4")
        await pilot.pause()
        items = again.query_one(SteerList).items
        assert items[0].source == dates.id and items[0].pinned
        script.push("Fine.", json.dumps({"facts": []}))
        await send(pilot, "and the tests?")
        assert memory_texts(again, "and the tests?") == [
            "- Dates are stored in UTC, offsets kept."]


async def test_forgets_are_replayed_on_catch_up_and_resume(app_factory, script):
    app = app_factory(backend="amem")  # notes n0, n1 (the scripted default: no keywords)
    async with app.run_test(size=(140, 44)) as pilot:
        await ready(app, pilot)
        await send(pilot, "dates are UTC")
        await send(pilot, "the CLI is engram")
        await steer(pilot, "n0", "d")
        await pilot.press("y")
        await until(pilot, lambda: "n0" not in app.agent.backend.notes)
        await send(pilot, "/backend full")
        await until(pilot, lambda: app.agent.backend.name == "full")
        await send(pilot, "/backend amem")
        await until(pilot, lambda: app.agent.backend.name == "amem")
        assert sorted(app.agent.backend.notes) == ["n1"]

    again = app_factory(continue_last=True)
    async with again.run_test(size=(140, 44)) as pilot:
        await ready(again, pilot)
        assert again.agent.backend.name == "amem" and sorted(again.agent.backend.notes) == ["n1"]


async def test_a_backend_that_cannot_forget_says_so(app_factory, script):
    app = app_factory(backend="mask")
    async with app.run_test(size=(140, 44)) as pilot:
        await ready(app, pilot)
        await send(pilot, "how do I run the migrations?")
        await pilot.press("f4")
        await pilot.pause()
        listing = app.query_one(SteerList)
        repo = next(i for i, item in enumerate(listing.items) if item.kind == "repo")
        listing.highlighted = repo
        await pilot.press("d")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert "mask cannot forget memories" in [n.message for n in app._notifications][-1]
        await pilot.press("p")  # but anything can be pinned
        await pilot.pause()
        assert app.agent.steering.pins
        assert app.query_one(Inspector).display
