from __future__ import annotations

import time

from memory.transcript import read_transcript
from tui.widgets import ABView, Inspector, StatusBar, TurnView

from .conftest import ready


async def until(pilot, condition, seconds: float = 10.0) -> None:
    """Let the app run until ``condition()`` holds (messages and workers are async)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.05)
    if condition():
        return
    app = pilot.app
    notes = [n.message for n in app._notifications][-5:]
    raise AssertionError(f"condition not reached in {seconds:g} s; operation "
                         f"{getattr(app, 'operation', '')!r}; last notifications {notes}")


async def send(pilot, text: str) -> None:
    prompt = pilot.app.query_one("#prompt")
    prompt.load_text(text)
    prompt.focus()
    taken = pilot.app.submissions
    await pilot.press("enter")
    # the prompt's message reaches the app through queues: a worker it starts does
    # not exist before the app has handled it, so wait for that first
    await until(pilot, lambda: pilot.app.submissions > taken, seconds=30)
    await pilot.app.workers.wait_for_complete()
    await until(pilot, lambda: not pilot.app.operation, seconds=60)
    await pilot.pause(0.2)


async def test_query_streams_an_answer(app_factory, script):
    script.push("Use **migrate** in app/db.py")
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        status = app.query_one(StatusBar)
        assert status.model == "scripted/t" and status.backend == "full"
        assert len(status.head) == 8 and status.branch == "main"
        await send(pilot, "how do I migrate?")
        [view] = app.query(TurnView)
        assert view.answer_text == "Use **migrate** in app/db.py"
        assert view.turn.ok and status.last_tokens > 0
        transcript = read_transcript(app.agent.transcript.path)
        assert [t["user"] for t in transcript.of_type("turn")] == ["how do I migrate?"]


async def test_prompt_history_and_multiline(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "first")
        prompt = app.query_one("#prompt")
        await pilot.press("up")
        assert prompt.text == "first"
        prompt.load_text("")
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb"


async def test_backend_switch_keeps_the_history(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "database migration steps?")
        await send(pilot, "render the form")
        await send(pilot, "/backend rag")
        await pilot.app.workers.wait_for_complete()
        assert app.agent.backend.name == "rag"
        assert app.query_one(StatusBar).backend == "rag"
        assert len(app.query(TurnView)) == 2
        await send(pilot, "and the migration again?")
        sent = script.calls[-1]
        assert any(m["content"] == "database migration steps?" for m in sent)
        records = read_transcript(app.agent.transcript.path)
        assert records.of_type("switch")[0]["to"] == "rag"
        await send(pilot, "/backend nosuch")
        assert app.agent.backend.name == "rag"


async def test_ab_answers_twice_and_records_the_choice(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "first question")
        await send(pilot, "/ab full empty")
        script.push("answer from full", "answer from empty")
        await send(pilot, "which is better?")
        [view] = app.query(ABView)
        assert view.pane("A").text == "answer from full"
        assert view.pane("B").text == "answer from empty"
        await pilot.press("2")
        assert view.chosen == "B"
        path = app.agent.transcript.path
        await until(pilot, lambda: read_transcript(path).of_type("ab"))
        transcript = read_transcript(path)
        [ab] = transcript.of_type("ab")
        assert ab["backends"] == ["full", "empty"] and ab["choice"] == 1
        assert transcript.of_type("turn")[-1]["assistant"] == "answer from empty"
        assert app.agent.turns[-1].assistant == "answer from empty"


async def test_context_inspector_shows_sections(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "how does migrate work?")
        await pilot.press("f2")
        await pilot.pause()
        inspector = app.query_one(Inspector)
        assert inspector.display
        body = str(inspector.query_one("#inspector-body").render())
        assert "system" in body and "repo" in body and "app/db.py::migrate" in body


async def test_inspector_shows_codemem_blocks_and_the_regeneration(app_factory, script):
    code = "```python\ndef check(form, v):\n    return form.validate_input(v)\n```"
    script.default = lambda messages: code if messages[0]["content"].startswith("You are") \
        else "One sentence."
    app = app_factory(backend="codemem")
    async with app.run_test(size=(150, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "Write check using validate_input.")
        await pilot.press("f2")
        await pilot.pause()
        body = str(app.query_one(Inspector).query_one("#inspector-body").render())
        assert "code  app/forms.py::Form.validate_input" in body
        assert "session  check#0 (turn 0): One sentence." in body


async def test_bad_model_is_a_notification_not_a_crash(app_factory, script):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "/model nonsense-provider/x")
        assert app.agent.llm.model == "scripted/t"
        assert any("unknown model" in n.message for n in app._notifications)
        await send(pilot, "/model openai/gpt-4o-mini")
        assert app.agent.llm.model == "scripted/t" or app.agent.llm.model.startswith("openai")
        await send(pilot, "still alive?")
        assert len(app.query(TurnView)) == 1


async def test_resume_continues_the_last_session(app_factory, script):
    first = app_factory()
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(first, pilot)
        await send(pilot, "remember the first question")
        session = first.session_id
    again = app_factory(continue_last=True)
    async with again.run_test(size=(120, 40)) as pilot:
        await ready(again, pilot)
        assert again.session_id == session
        assert [t.user for t in again.agent.turns] == ["remember the first question"]
        assert len(again.query(TurnView)) == 1
        await send(pilot, "second question")
        transcript = read_transcript(again.agent.transcript.path)
        assert [t["user"] for t in transcript.of_type("turn")] == [
            "remember the first question", "second question"]


async def test_theme_switch_persists(app_factory, script, tmp_path):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert app.theme == "engram-dark"
        await send(pilot, "/theme engram-light")
        assert app.theme == "engram-light"
    again = app_factory()
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert again.theme == "engram-light"
        await ready(again, pilot)  # not quit while the session opens (its task bar goes)


async def test_export_and_help(app_factory, script, tmp_path):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await send(pilot, "a question")
        out = tmp_path / "talk.md"
        await send(pilot, f"/export {out}")
        assert "**You:** a question" in out.read_text()
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "HelpScreen"


async def test_every_slash_command_is_in_the_palette(app_factory, script):
    from tui.commands import EngramCommands
    from tui.slash import COMMANDS

    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        provider = EngramCommands(app.screen)
        titles = [str(hit.text) async for hit in provider.discover()]
        for command in COMMANDS:
            assert any(t.startswith(f"/{command.name}") for t in titles), command.name
        assert "Backend: rag" in titles and "Theme: engram-light" in titles
        [hit] = [h async for h in provider.search("Backend: empty")][:1]
        await hit.command()
        await until(pilot, lambda: app.agent.backend.name == "empty")
