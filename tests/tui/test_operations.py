"""Slow operations never freeze the app: a backend switch catches up in a worker with
visible progress, keys echo meanwhile, a query is refused with a reason (never queued and
replayed), Esc cancels and keeps the previous backend. Skipped memory updates are shown."""

from __future__ import annotations

import json
import time

from memory.transcript import read_transcript
from tui.widgets import ABView, Inspector, StatusBar, TaskBar, TurnView

from .conftest import ready
from .test_app import send, until


async def test_switch_catches_up_in_the_background_and_esc_cancels(
        app_factory, script, slow_backend):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        for query in ("first", "second", "third"):
            await send(pilot, query)
        prompt, bar = app.query_one("#prompt"), app.query_one(TaskBar)
        prompt.load_text("/backend slow")
        await pilot.press("enter")
        await until(pilot, lambda: bar.total == 3)
        assert bar.display and "switching to slow" in bar.render()
        assert "of 3" in bar.render() and "Esc cancels" in bar.render()
        assert " s · " in bar.render()  # elapsed seconds
        started = time.monotonic()
        await pilot.press("h", "i")
        assert prompt.text == "hi" and time.monotonic() - started < 0.5  # keys echo
        assert app.operation  # ... while the catch-up still runs
        await pilot.press("enter")  # a query meanwhile: refused, back in the prompt
        await pilot.pause()
        assert prompt.text == "hi" and len(app.query(TurnView)) == 3
        assert any("not sent" in n.message and "switching to slow" in n.message
                   for n in app._notifications)
        await pilot.press("escape")
        await until(pilot, lambda: not bar.display)
        await app.workers.wait_for_complete()
        assert app.agent.backend.name == "full"
        assert app.query_one(StatusBar).backend == "full"
        assert any("cancelled; full is still active" in n.message for n in app._notifications)
        assert not read_transcript(app.agent.transcript.path).of_type("switch")
        assert len(app.query(TurnView)) == 3  # nothing ran after the cancel


async def test_switch_completes_and_reports_skipped_memory(app_factory, script, slow_backend):
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "first")
        await send(pilot, "/backend slow")
        await app.workers.wait_for_complete()
        assert app.agent.backend.name == "slow" and app.agent.backend.seen == [0]
        status = app.query_one(StatusBar)
        assert status.backend == "slow"
        assert status.memory == "memory 1 skipped"
        assert "⚠ memory 1 skipped" in status.render()
        assert [n.title for n in app._notifications].count("memory update skipped") == 1
        await send(pilot, "second")
        assert status.memory == "memory 2 skipped"
        # the warning comes once; the count goes on
        assert [n.title for n in app._notifications].count("memory update skipped") == 1
        await pilot.press("f2")
        await pilot.pause()
        body = str(app.query_one(Inspector).query_one("#inspector-body").render())
        assert "skipped (slow): no facts found in turn 1" in body
        records = read_transcript(app.agent.transcript.path).of_type("memory")
        assert [r["op"] for r in records] == ["skipped", "skipped"]


async def test_a_query_during_an_answer_is_refused_not_replayed(app_factory, script,
                                                                 slow_backend):
    app = app_factory(backend="slow")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        prompt = app.query_one("#prompt")
        prompt.load_text("first")
        await pilot.press("enter")
        await until(pilot, lambda: app.operation.startswith("answering"))
        prompt.load_text("second")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [t.user for t in app.agent.turns] == ["first"]
        assert prompt.text == "second"


async def test_ab_choose_is_disabled_until_both_answers_are_done(app_factory, script,
                                                                 slow_backend):
    from tests.tui import _slow_backend

    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "first")
        await send(pilot, "/ab full slow")
        prompt = app.query_one("#prompt")
        prompt.load_text("which is better?")
        _slow_backend.HOLD.clear()  # B's answer stays in flight until released below
        try:
            await pilot.press("enter")
            await until(pilot, lambda: bool(app.query(ABView)) and "answering" in app.operation,
                        seconds=30)
            [view] = app.query(ABView)
            assert all(b.disabled for b in view.query("Button"))
            view.focus()
            await pilot.press("1")
            assert view.chosen is None
        finally:
            _slow_backend.HOLD.set()
        await app.workers.wait_for_complete()
        assert not any(b.disabled for b in view.query("Button"))
        await pilot.press("1")
        assert view.chosen == "A"
        await until(pilot, lambda: read_transcript(app.agent.transcript.path).of_type("ab"))


async def test_palette_offers_no_ab_of_a_backend_against_itself(app_factory, script):
    from tui.commands import EngramCommands

    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        titles = [str(hit.text) async for hit in EngramCommands(app.screen).discover()]
        assert "A/B: full vs full" not in titles and "A/B: full vs rag" in titles
        await send(pilot, "/ab rag rag")
        assert app.ab_pending is None
        assert any("two different backends" in n.message for n in app._notifications)


async def test_the_session_record_names_the_repository_from_the_start(app_factory, demo_repo):
    from memory import _git
    from replay.sessions.source import load_recorded

    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):  # the session record, before the index is necessarily ready
            if app.agent is not None:
                break
            await pilot.pause(0.05)
        session = read_transcript(app.agent.transcript.path).session
        assert session.repo == str(demo_repo.resolve())
        assert session.head == _git.head(demo_repo) and len(session.head) == 40
        await ready(app, pilot)
        await send(pilot, "a question")
        assert load_recorded(app.agent.transcript.path).repo == str(demo_repo.resolve())


async def test_compact_forces_a_summary_with_the_developers_guidance(app_factory, script):
    app = app_factory(backend="compact")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        for query in ["parse_date must return UTC.", "connect needs a timeout.",
                      "render_form escapes HTML."]:
            await send(pilot, query)
        script.push(json.dumps({"requirements": ["parse_date returns UTC (app/dates.py)."],
                                "decisions": [], "revisions": [], "open_errors": [],
                                "code_written": []}))
        await send(pilot, "/compact keep the function names, don't drop the timeout")
        await until(pilot, lambda: not app.operation)
        backend = app.agent.backend
        assert backend.summary == "Requirements:\n- parse_date returns UTC (app/dates.py)."
        assert backend.summarized == [1] and [t.index for t in backend.tail] == [2]
        prompt = script.calls[-1][-1]["content"]
        assert ("The developer's instructions for this summary: keep the function names, "
                "don't drop the timeout") in prompt
        assert any("compacted: the summary now stands for turns 1-1" in n.message
                   for n in app._notifications)
        records = read_transcript(app.agent.transcript.path).of_type("memory")
        assert [r["op"] for r in records] == ["SUMMARIZE"]
        await send(pilot, "/compact")
        await until(pilot, lambda: not app.operation)
        assert any("nothing to compact" in n.message for n in app._notifications)


async def test_compact_on_another_backend_says_it_cannot(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "/compact")
        assert any("the full backend cannot compact" in n.message for n in app._notifications)


async def say_fact(pilot, script, fact: str, summary: str = "") -> None:
    """The developer states ``fact``: the scripted model answers and extracts it, and with
    ``summary`` the session's summary (choosing the fact) is queued for later."""
    script.push("Noted.", json.dumps({"facts": [{"text": fact, "locations": []}]}))
    await send(pilot, fact)
    if summary:
        script.push(json.dumps({"decisions": [fact], "summary": summary}))


async def test_remember_then_experience_in_a_later_session(app_factory, script):
    first = app_factory(backend="cards")
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(first, pilot)
        await say_fact(pilot, script, "parse_date must return UTC.",
                       summary="Settled parse_date's time zone.")
        await send(pilot, "/remember")
        await until(pilot, lambda: not first.operation)
        assert any("Settled parse_date's time zone." in n.message
                   for n in first._notifications)
        await send(pilot, "/experience")
        assert any("no earlier session of this repository left a summary" in n.message
                   for n in first._notifications)  # its own is not experience
    second = app_factory(backend="cards")
    async with second.run_test(size=(120, 40)) as pilot:
        await ready(second, pilot)
        await send(pilot, "/experience")
        assert any("now sees session" in n.message for n in second._notifications)
        assert second.agent.backend.pinned


async def test_quitting_keeps_the_session_summary_and_a_second_ctrl_q_skips_it(app_factory,
                                                                                script):
    first = app_factory(backend="cards")
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(first, pilot)
        await say_fact(pilot, script, "parse_date must return UTC.",
                       summary="Settled parse_date's time zone.")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not first.is_running)
    second = app_factory(backend="cards")
    async with second.run_test(size=(120, 40)) as pilot:
        await ready(second, pilot)
        [exp] = second.agent.backend.experiences
        assert "Settled parse_date's time zone." in exp.text()
        await send(pilot, "/quit")  # nothing said in this session: quits at once
        await until(pilot, lambda: not second.is_running)
    third = app_factory(backend="cards")
    async with third.run_test(size=(120, 40)) as pilot:
        await ready(third, pilot)
        await say_fact(pilot, script, "Dates print as ISO 8601.")
        third.quitting = True  # as after a first Ctrl+Q: the second one quits at once
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not third.is_running)
    assert [e.session for e in third.agent.backend.store.load()] == [first.session_id]


async def test_remember_on_another_backend_says_it_cannot(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "/remember")
        await send(pilot, "/experience")
        said = [n.message for n in app._notifications]
        assert any("the full backend keeps no session summaries" in m for m in said)
        assert any("the full backend has no session summaries" in m for m in said)


async def test_inspector_shows_each_memory_card_with_its_fields(app_factory, script):
    app = app_factory(backend="cards")
    async with app.run_test(size=(140, 50)) as pilot:
        await ready(app, pilot)
        await say_fact(pilot, script, "parse_date must return UTC.")
        script.push("def parse_date(text): ...", json.dumps({"facts": []}))
        await send(pilot, "Write parse_date now.")
        await pilot.press("f2")
        await pilot.pause()
        body = str(app.query_one(Inspector).query_one("#inspector-body").render())
        assert "\n    card fact:0:0 · utility " in body
        for field in ("evidence:", "action hint:", "scope:"):  # a statement's card: short
            assert f"\n    {field} " in body, field
        assert "\n    trigger: " not in body and "\n    failure if ignored: " not in body
        assert '\n    evidence: "parse_date must return UTC." (the developer' in body


async def test_a_cancelled_answer_stops_taking_tool_call_lines(app_factory, script,
                                                               slow_backend):
    """Esc during an answer: its turn says so and is no longer the one tool calls are
    shown in (a later call, e.g. an A/B's, would land in the cancelled turn)."""
    from tests.tui import _slow_backend

    app = app_factory(backend="slow", act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        prompt = app.query_one("#prompt")
        prompt.load_text("which is better?")
        _slow_backend.HOLD.clear()  # the answer stays in flight until released below
        try:
            await pilot.press("enter")
            await until(pilot, lambda: "answering" in app.operation, seconds=30)
            [view] = app.query(TurnView)
            assert app.edits.watching is view
            await pilot.press("escape")
            await until(pilot, lambda: not app.operation, seconds=30)
        finally:
            _slow_backend.HOLD.set()
        assert app.edits.watching is None
        assert "cancelled" in str(view.query_one(".meta").render())
