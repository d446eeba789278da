"""The inspector shows what the model no longer saw in the last turn: the tool outputs
``mask`` masked (the call, its arguments, the size dropped), and ``compact``'s summary
with the calls and turns it replaced. The app runs on a real repository with a scripted
model that reads files through the tool loop."""

from __future__ import annotations

import json

from memory.backends.compact import CALLS_PROMPT, HEADINGS, SUMMARY_PROMPT
from tests.asked import asked
from tui.widgets import Inspector

from .conftest import ready
from .test_acting import ask, call, done

NOTES = "db.py holds connect(url, timeout=5); forms.py validates input."


class Reader:
    """Each turn reads app/db.py then app/forms.py, then answers; summaries on request."""

    def __init__(self) -> None:
        self.steps: dict[str, int] = {}

    def __call__(self, messages: list[dict]) -> str:
        system = messages[0]["content"]
        if system.startswith(SUMMARY_PROMPT[:60]):
            return json.dumps({key: [f"the developer read the app's {key}"] for key in HEADINGS})
        if system.startswith(CALLS_PROMPT[:60]):
            return json.dumps({"notes": NOTES})
        request = asked(messages)
        if request.step:
            query = request.query
            n = self.steps[query] = self.steps.get(query, 0) + 1
            if n == 1:
                return call("read_file", True, path="app/db.py", start=1, end=0)
            if n == 2:
                return call("read_file", False, path="app/forms.py", start=1, end=0)
            return json.dumps({"call": {"function": "answer"}})
        return "Both files were read."


def body(app) -> str:
    return str(app.query_one(Inspector).query_one("#inspector-body").render())


async def test_the_inspector_shows_the_outputs_mask_masked(app_factory, script, demo_repo):
    script.default = Reader()
    db = len(json.dumps((demo_repo / "app/db.py").read_text()))  # about its size
    app = app_factory(act=True, backend="mask", backend_options={"mask_observations": 1})
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        await ask(pilot, "what do db.py and forms.py hold?")
        await done(pilot)
        await ask(pilot, "and once more, what do they hold?")
        await done(pilot)
        await pilot.press("f2")
        await pilot.pause()
        shown = body(app)
        turn = app.agent.turns[-1]
        [event] = turn.meta["tools"]["dropped"]
        result = turn.meta["tools"]["calls"][0]["result"]
        assert "not seen in this turn" in shown
        assert (f'masked by mask: read_file({{"path": "app/db.py", "start": 1, "end": 0}}) · '
                f"{len(result):,} chars, {event['tokens_before']} → {event['tokens_after']} tok"
                ) in " ".join(shown.split())
        assert event["tokens_before"] > event["tokens_after"] and len(result) > db // 2
        # in the history: only the newest output stays whole (mask_observations 1)
        flat = " ".join(shown.split())
        assert "masked in the history from now on (2)" in shown
        assert 'turn 0: read_file({"path": "app/forms.py"' in flat
        assert 'turn 1: read_file({"path": "app/db.py"' in flat
        assert "→ [output of read_file omitted: " in flat
        # the turn's calls as the model saw them, as their own group
        assert "calls 2 · " in flat and " tok call:1:read_file:masked " in flat
        assert " tok call:2:read_file " in flat


async def test_the_inspector_shows_compacts_summary_and_what_it_replaced(app_factory, script,
                                                                         demo_repo):
    script.default = Reader()
    app = app_factory(act=True, backend="compact", backend_options={"compact_share": 0.01})
    async with app.run_test(size=(160, 60)) as pilot:
        await ready(app, pilot)
        for n in range(3):
            await ask(pilot, f"turn {n}: what do db.py and forms.py hold?")
            await done(pilot)
        await pilot.press("f2")
        await pilot.pause()
        shown = " ".join(body(app).split())
        folded = [e for e in app.agent.turns[-1].meta["tools"]["dropped"]
                  if e["action"] == "summarised"]
        assert folded and folded[0]["by"] == "compact"
        assert 'summarised by compact: read_file({"path": "app/db.py"' in shown
        assert f"summary of the calls up to 1: {NOTES}" in shown
        # the turns compact folded when the last turn was observed, and what they held
        assert app.agent.backend.last_compaction["after"] == 2
        assert "summarised by compact summary of turns 1-1: Requirements: - the developer" \
            in shown
        assert ("replaced turn 1: Developer: turn 1: what do db.py and forms.py hold? | "
                "Assistant: Both files were read. | 2 tool calls") in shown
