"""The app acting on a real git repository in a tmp dir, driven by a scripted model: an
answer's edit shown as a diff, applied (one commit) on y, nothing written on n, /undo
restoring the tree byte for byte, refused and malformed edits said in the turn, a line
per tool call, and the consent modal before a command runs in the jail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from memory.acting.jail import bwrap
from tests.asked import asked
from tui.app import AppOptions, EngramApp
from tui.screens import ConsentScreen, DiffScreen
from tui.widgets import StatusBar, TurnView

from ..conftest import git
from .conftest import ready
from .test_app import send, until

jail = pytest.mark.skipif(bwrap.available() is not None,
                          reason=f"no OS jail here: {bwrap.available()}")

EDIT = """The timeout goes up to ten seconds.

@@@ EDIT app/db.py
@@@ SEARCH
def connect(url, timeout=5):
@@@ REPLACE
def connect(url, timeout=10):
@@@ END
"""


def call(function: str, heartbeat: bool = False, **args) -> str:
    return json.dumps({"call": {"function": function, **args, "request_heartbeat": heartbeat}})


ANSWER = json.dumps({"call": {"function": "answer"}})


class Model:
    """The scripted model of one test: the tool-loop steps it takes (then it answers),
    and its answers in order; every answer request is kept."""

    def __init__(self, *answers: str, steps: tuple[str, ...] = ()) -> None:
        self.answers = list(answers)
        self.steps = list(steps)
        self.asked: list[list[dict]] = []

    def __call__(self, messages: list[dict]) -> str:
        if asked(messages).step:
            return self.steps.pop(0) if self.steps else ANSWER
        self.asked.append(messages)
        return self.answers.pop(0) if self.answers else "nothing more"


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the work tree (not .git), byte for byte."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def answering(app) -> bool:
    return any(w.group == "answer" and not w.is_finished for w in app.workers)


async def ask(pilot, text: str) -> None:
    """Send a query; return once the answer is done or a modal asks something."""
    app = pilot.app
    prompt = app.query_one("#prompt")
    prompt.load_text(text)
    prompt.focus()
    taken = app.submissions
    await pilot.press("enter")
    await until(pilot, lambda: app.submissions > taken, seconds=30)
    await until(pilot, lambda: isinstance(app.screen, DiffScreen | ConsentScreen)
                or not answering(app), seconds=60)
    await pilot.pause(0.1)


async def done(pilot) -> None:
    await until(pilot, lambda: not answering(pilot.app) and not pilot.app.operation,
                seconds=60)
    await pilot.pause(0.1)


def indexed(app, text: str) -> bool:
    """Whether the agent's repository index holds ``text`` in some chunk's code."""
    return any(text in chunk.code for chunk in app.agent.env.repo.chunks())


def edit_line(app) -> str:
    return str(app.query(TurnView).last().query_one(".edit").render())


async def test_an_edit_is_shown_and_applied_on_y(app_factory, script, demo_repo):
    script.default = Model(EDIT)
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        head = git(demo_repo, "rev-parse", "HEAD").strip()
        await ask(pilot, "raise the connect timeout to 10")
        assert isinstance(app.screen, DiffScreen)
        assert "-def connect(url, timeout=5):" in app.screen.diff
        assert app.screen.paths == ["app/db.py"]
        await pilot.press("y")
        await done(pilot)
        assert "def connect(url, timeout=10):" in (demo_repo / "app/db.py").read_text()
        commit = git(demo_repo, "rev-parse", "HEAD").strip()
        assert commit != head and git(demo_repo, "rev-parse", "HEAD~1").strip() == head
        assert git(demo_repo, "status", "--porcelain") == ""
        assert indexed(app, "timeout=10") and not indexed(app, "timeout=5")
        line = edit_line(app)
        assert line.startswith("✓ applied") and commit[:8] in line and "app/db.py" in line
        assert app.query_one(StatusBar).head == commit[:8]
        fold = app.query(TurnView).last().query_one(".diff")  # the diff stays in the turn
        assert fold.collapsed and "+def connect(url, timeout=10):" in str(
            fold.query_one(".diff-body", Static).render())


async def test_n_rejects_and_nothing_is_written(app_factory, script, demo_repo):
    script.default = Model(EDIT)
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        before, head = tree(demo_repo), git(demo_repo, "rev-parse", "HEAD")
        await ask(pilot, "raise the connect timeout to 10")
        assert isinstance(app.screen, DiffScreen)
        await pilot.press("n")
        await done(pilot)
        assert tree(demo_repo) == before and git(demo_repo, "rev-parse", "HEAD") == head
        assert edit_line(app).startswith("✗ rejected")


async def test_undo_restores_the_tree_byte_for_byte(app_factory, script, demo_repo):
    (demo_repo / "notes.txt").write_text("my own uncommitted work\n")  # never touched
    script.default = Model(EDIT)
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        before, head = tree(demo_repo), git(demo_repo, "rev-parse", "HEAD")
        await ask(pilot, "raise the connect timeout to 10")
        await pilot.press("y")
        await done(pilot)
        assert tree(demo_repo) != before
        await send(pilot, "/undo")
        await done(pilot)
        assert tree(demo_repo) == before
        assert git(demo_repo, "rev-parse", "HEAD") == head
        assert indexed(app, "timeout=5") and not indexed(app, "timeout=10")
        assert app.query_one(StatusBar).head == head[:8]
        assert edit_line(app).startswith("↶ undone")
        await send(pilot, "/undo")  # nothing of engram's left: the engine's refusal
        notes = [n.message for n in app._notifications]
        assert "is not an edit engram applied" in notes[-1]
        assert tree(demo_repo) == before


async def test_a_refused_edit_is_said_and_nothing_written(app_factory, script, demo_repo):
    script.default = Model(EDIT.replace("timeout=5", "timeout=7"))  # not in the file
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        before = tree(demo_repo)
        await ask(pilot, "raise the connect timeout to 10")
        await done(pilot)
        assert not isinstance(app.screen, DiffScreen)
        line = edit_line(app)
        assert line.startswith("✗ the edit was not applied") and "nothing was written" in line
        assert "SEARCH lines are not in the file" in line
        assert tree(demo_repo) == before


async def test_an_edit_outside_the_repository_is_refused(app_factory, script, demo_repo):
    script.default = Model(EDIT.replace("app/db.py", "../outside.py"))
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "write outside")
        await done(pilot)
        assert "outside the repository" in edit_line(app)
        assert not (demo_repo.parent / "outside.py").exists()


async def test_a_malformed_block_is_shown(app_factory, script, demo_repo):
    script.default = Model("@@@ EDIT app/db.py\n@@@ SEARCH\ndef connect(url, timeout=5):\n")
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        before = tree(demo_repo)
        await ask(pilot, "half an edit")
        await done(pilot)
        line = edit_line(app)
        assert "block 1 (app/db.py)" in line and "no '@@@ REPLACE'" in line
        assert tree(demo_repo) == before


async def test_auto_apply_commits_without_asking(app_factory, script, demo_repo):
    script.default = Model(EDIT)
    app = app_factory(act=True, auto_apply=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "raise the connect timeout to 10")
        await done(pilot)
        assert not isinstance(app.screen, DiffScreen)
        assert "timeout=10" in (demo_repo / "app/db.py").read_text()
        assert "auto_apply is on" in edit_line(app)


async def test_every_tool_call_has_a_line(app_factory, script, demo_repo):
    script.default = Model("connect takes a url and a timeout.",
                           steps=(call("read_file", path="app/db.py", start=1, end=0),))
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "what does connect take?")
        await done(pilot)
        view = app.query(TurnView).last()
        tools = str(view.query_one(".tools").render())
        assert tools.startswith("⚙ read_file path=app/db.py") and tools.endswith("ok")
        assert "def connect(url, timeout=5)" in json.dumps(script.default.asked[-1])


@jail
@pytest.mark.parametrize("key, how", [("o", "allowed once"), ("escape", "denied by you")])
async def test_a_command_runs_only_after_consent(app_factory, script, demo_repo, key, how):
    model = Model("done.", steps=(call("run", command="python -c 'print(6 * 7)'"),))
    script.default = model
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "print six times seven")
        assert isinstance(app.screen, ConsentScreen)
        assert app.screen.command == "python -c 'print(6 * 7)'"
        await pilot.press(key)
        await done(pilot)
        tools = str(app.query(TurnView).last().query_one(".tools").render())
        assert tools.startswith("⚙ run command=") and how in tools
        seen = json.dumps(model.asked[-1])
        if key == "o":
            assert "exit 0" in tools and "42" in seen
        else:
            assert "failed" in tools and "denied this command" in seen and "42" not in seen


@jail
async def test_a_command_allowed_for_the_session_is_not_asked_again(app_factory, script):
    run = call("run", command="python -c 'print(6 * 7)'")
    script.default = Model("one.", "two.", steps=(run, run))
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "print it")
        assert isinstance(app.screen, ConsentScreen)
        await pilot.press("s")
        await done(pilot)
        await ask(pilot, "print it again")
        await done(pilot)
        assert not isinstance(app.screen, ConsentScreen)
        tools = str(app.query(TurnView).last().query_one(".tools").render())
        assert "allowed for the session" in tools and "exit 0" in tools


async def test_without_a_repository_the_app_says_why(app_factory, script, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    app = EngramApp(AppOptions(repo=plain, model="scripted/t", data_dir=tmp_path / "data"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: bool(app._boot_error))
        await send(pilot, "/undo")
        notes = [n.message for n in app._notifications]
        assert "nothing to undo: engram could not start" in notes[-1]
        assert "not a git repository" in notes[-1]



@jail
async def test_the_calls_so_far_show_while_the_developer_is_asked(app_factory, script):
    script.default = Model("done.", steps=(
        call("read_file", True, path="app/db.py", start=1, end=0),
        call("run", command="python -c 'print(6 * 7)'")))
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "read then run")
        assert isinstance(app.screen, ConsentScreen)
        await pilot.pause(0.2)
        tools = app.query(TurnView).last().query_one(".tools")
        assert tools.display and str(tools.render()) == "⚙ read_file path=app/db.py start=1 · ok"
        await pilot.press("d")
        await done(pilot)
        lines = str(tools.render()).splitlines()
        assert lines[0].startswith("⚙ read_file") and "denied by you" in lines[1]


async def test_uncommitted_work_is_never_lost(app_factory, script, demo_repo):
    """An uncommitted change in another file stays through apply and undo and is not
    committed; an edit of a file holding uncommitted changes is refused."""
    forms = demo_repo / "app/forms.py"
    forms.write_text(forms.read_text() + "# my work in progress\n")
    script.default = Model(EDIT, EDIT.replace("app/db.py", "app/forms.py")
                           .replace("def connect(url, timeout=5):", '"""Forms and their '
                                    'validation."""').replace("def connect(url, timeout=10):",
                                                              '"""Forms."""'))
    app = app_factory(act=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        before = tree(demo_repo)
        await ask(pilot, "raise the connect timeout to 10")
        await pilot.press("y")
        await done(pilot)
        assert "timeout=10" in (demo_repo / "app/db.py").read_text()
        assert forms.read_bytes() == before["app/forms.py"]
        assert git(demo_repo, "show", "--name-only", "--format=", "HEAD").split() == ["app/db.py"]
        await ask(pilot, "shorten the forms docstring")
        await done(pilot)
        assert not isinstance(app.screen, DiffScreen)
        assert "uncommitted" in edit_line(app) and "nothing was written" in edit_line(app)
        assert forms.read_bytes() == before["app/forms.py"]
        await send(pilot, "/undo")
        await done(pilot)
        assert tree(demo_repo) == before
        assert git(demo_repo, "status", "--porcelain").split() == ["M", "app/forms.py"]



async def test_a_resumed_session_shows_its_edits_and_undoes(app_factory, script, demo_repo):
    script.default = Model(EDIT, EDIT.replace("timeout=5", "timeout=10")
                           .replace("timeout=10):\n@@@ END", "timeout=20):\n@@@ END"))
    first = app_factory(act=True)
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(first, pilot)
        before = tree(demo_repo)
        await ask(pilot, "raise the connect timeout to 10")
        await pilot.press("y")
        await done(pilot)
        await ask(pilot, "and to 20")
        await pilot.press("n")
        await done(pilot)
        commit = git(demo_repo, "rev-parse", "HEAD").strip()
    again = app_factory(act=True, continue_last=True)
    async with again.run_test(size=(120, 40)) as pilot:
        await ready(again, pilot)
        lines = [str(v.query_one(".edit").render()) for v in again.query(TurnView)]
        assert lines[0] == f"✓ applied as {commit[:8]}: app/db.py"
        assert lines[1].startswith("✗ rejected: app/db.py")
        assert len(again.query(".diff")) == 2
        await send(pilot, "/undo")
        await done(pilot)
        assert tree(demo_repo) == before
        assert str(again.query(TurnView).first().query_one(".edit").render()).startswith(
            "↶ undone")


async def test_commands_off_offers_no_run_tool(app_factory, script):
    app = app_factory(act=True, commands=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        names = [t.name for t in app.agent.tools.tools()]
        assert "run" not in names and "read_file" in names

@pytest.mark.slow
async def test_the_embedded_model_answers_a_where_is_question_from_the_code(
        demo_repo, tmp_path, monkeypatch):
    """local/smollm2 in the app is offered no tools and no edit format (it cannot follow
    them): it answers a where-is question from the code the backend retrieved, with no
    consent prompt and no edit; the app said so once, in a notice and the status line."""
    from memory.acting.workbench import EDITING
    from memory.llm.capabilities import EMBEDDED

    monkeypatch.setenv("ENGRAM_CONFIG", str(tmp_path / "config.json"))
    app = EngramApp(AppOptions(repo=demo_repo, model="local/smollm2", data_dir=tmp_path / "d",
                               max_tokens=96, act=True))
    before = tree(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert app.edits.bench is not None and app.edits.bench.offered == EMBEDDED
        assert app.agent.tools is None and app.agent.examples == []
        assert EDITING not in app.agent.config.system_prompt
        assert "answers from the code" in str(app.query_one(StatusBar).render())
        notice = app.edits.notice  # notified once (shown 20 s)
        assert "no tools and no edits" in notice and "/model NAME" in notice
        prompt = app.query_one("#prompt")
        prompt.load_text("which function opens a connection to the database, and where is it?")
        prompt.focus()
        await pilot.press("enter")
        await until(pilot, lambda: app.submissions > 0, seconds=60)
        await until(pilot, lambda: isinstance(app.screen, ConsentScreen | DiffScreen)
                    or (not answering(app) and not app.operation), seconds=900)
        view = app.query(TurnView).last()
        turn = view.turn
        print("answer:", turn.assistant)
        assert turn is not None and turn.ok and turn.assistant.strip()
        assert "tools" not in turn.meta  # no tool loop ran
        assert any(c.get("source") == "app/db.py::connect" for c in turn.context)
        assert not view.query_one(".edit").display and not view.query_one(".tools").display
        assert not isinstance(app.screen, ConsentScreen | DiffScreen)
        shown = len(app._notifications)
        app.edits.offer()  # offered again (as after /model) to the same model: not said again
        await pilot.pause(0.1)
        assert len(app._notifications) == shown
    assert tree(demo_repo) == before
