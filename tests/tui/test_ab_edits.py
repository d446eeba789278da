"""A/B with the app acting on the repository: each pane lists its answer's tool calls,
and the kept answer's edit is proposed in its pane (y applies and commits); an answer
left aside is never applied."""

from __future__ import annotations

from textual.widgets import Static

from tui.screens import DiffScreen
from tui.widgets._ab import ABView

from ..conftest import git
from .conftest import ready
from .test_acting import EDIT, Model, call, done, tree
from .test_app import send, until


async def _ab(app, pilot) -> ABView:
    await ready(app, pilot)
    await send(pilot, "/ab full empty")
    await send(pilot, "raise the connect timeout to 10")
    [view] = app.query(ABView)
    return view


async def test_the_kept_answers_edit_is_proposed_in_its_pane_and_applied(
        app_factory, script, demo_repo):
    script.default = Model(EDIT, "Leave it as it is.",
                           steps=(call("read_file", path="app/db.py", start=1, end=0),))
    app = app_factory(act=True)
    async with app.run_test(size=(140, 50)) as pilot:
        view = await _ab(app, pilot)
        head = git(demo_repo, "rev-parse", "HEAD").strip()
        tools = str(view.pane("A").query_one(".tools", Static).render())
        assert "read_file" in tools and "app/db.py" in tools
        await pilot.press("1")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), seconds=60)
        assert app.screen.paths == ["app/db.py"]
        await pilot.press("y")
        await done(pilot)
        assert "def connect(url, timeout=10):" in (demo_repo / "app/db.py").read_text()
        assert git(demo_repo, "rev-parse", "HEAD~1").strip() == head
        line = str(view.pane("A").query_one(".edit", Static).render())
        assert line.startswith("✓ applied")


async def test_an_answer_left_aside_is_never_applied(app_factory, script, demo_repo):
    script.default = Model(EDIT, "Leave it as it is.")
    app = app_factory(act=True)
    async with app.run_test(size=(140, 50)) as pilot:
        view = await _ab(app, pilot)
        before, head = tree(demo_repo), git(demo_repo, "rev-parse", "HEAD")
        await pilot.press("2")  # the answer without an edit is kept
        await until(pilot, lambda: app.agent.turns
                    and app.agent.turns[-1].assistant == "Leave it as it is.", seconds=60)
        await done(pilot)
        assert not isinstance(app.screen, DiffScreen)
        assert tree(demo_repo) == before and git(demo_repo, "rev-parse", "HEAD") == head
        assert not view.pane("A").query_one(".edit", Static).display


async def test_the_consent_modal_names_the_pane_and_backend_that_asks(
        app_factory, script, demo_repo, monkeypatch):
    """Both answers of an A/B ask to run a command: each modal says which answer (pane)
    and which backend asks; denied, A's repeat of it ends A's loop unasked."""
    from memory.acting.jail.tree import TreeJail
    from tui.screens import ConsentScreen

    from .test_acting import answering

    monkeypatch.setattr(TreeJail, "available", lambda self: None)  # every command denied
    run_tests = call("run", command="pytest -q")
    script.default = Model("A's answer.", "B's answer.",
                           steps=(run_tests, run_tests, call("run", command="ls")))
    app = app_factory(act=True)
    async with app.run_test(size=(140, 50)) as pilot:
        await ready(app, pilot)
        await send(pilot, "/ab full empty")
        prompt = app.query_one("#prompt")
        prompt.load_text("run the tests")
        prompt.focus()
        await pilot.press("enter")
        asked = []
        for _ in range(2):
            await until(pilot, lambda: isinstance(app.screen, ConsentScreen)
                        and bool(app.screen.query("#deny")), seconds=60)  # mounted
            await pilot.pause(0.1)
            screen = app.screen
            asked.append((screen.command, str(screen.query_one("#consent-asking",
                                                                Static).render())))
            await pilot.press("d")
            await until(pilot, lambda s=screen: app.screen is not s, seconds=30)
        await until(pilot, lambda: not answering(app) and bool(app.query(ABView))
                    and app.comparison.awaiting_choice, seconds=60)
        assert asked == [
            ("pytest -q", "Answer A of the A/B (backend full, model scripted/t) asks: run "
                          "this command in the sandbox?"),
            ("ls", "Answer B of the A/B (backend empty, model scripted/t) asks: run this "
                   "command in the sandbox?")]
        [view] = app.query(ABView)
        tools_a = str(view.pane("A").query_one(".tools", Static).render())
        assert "denied by you" in tools_a
        assert "asked again for what the developer denied at step 1" in tools_a
        assert not isinstance(app.screen, ConsentScreen)
