"""Shared by the cards tests (imported, never collected): the scripted extractor's
answers, a short conversation, a judgment. Their fixtures are in conftest.py."""

from __future__ import annotations

import json
from pathlib import Path

from memory.backends import BackendEnv
from memory.backends.cards.score import (
    Judgment,
)
from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from memory.types import Turn
from tests.conftest import make_repo


def facts(*items):
    return json.dumps({"facts": [{"text": t, "locations": list(loc)} for t, *loc in items]})


CONNECT_5 = "The connect function in app/db.py must use a timeout of 5 seconds."
CONNECT_10 = "Actually, the connect function must use a timeout of 10 seconds instead."
FORMS_RULE = "validate_input must reject strings made only of spaces."


async def conversation(backend, script):
    """Three turns, the extractor's answer scripted for each (``cards_facts=llm``)."""
    script.push(facts((CONNECT_5, "app/db.py::connect")))
    await backend.observe(Turn(0, CONNECT_5, "Noted."))
    script.push(facts((FORMS_RULE, "app/forms.py::Form.validate_input")))
    await backend.observe(Turn(1, FORMS_RULE, "```python\ndef validate_input(self, value):\n"
                                             "    if not value.strip():\n"
                                             "        raise ValueError('empty')\n"
                                             "    return True\n```"))
    script.push(facts((CONNECT_10, "app/db.py::connect")))
    await backend.observe(Turn(2, CONNECT_10, "OK, 10 seconds."))



async def said_in_turns(cards, script, said):
    for i, text in enumerate(said):
        script.push(facts((text,)))
        await cards.observe(Turn(i, text, "Noted."))
    return [n.content for n in cards.graph.current() if n.type == "fact"]



def judgment(shift, necessity, uplift, risk):
    return Judgment("search", "update x", shift, necessity, uplift, risk, "r", 0.7)


TRACEBACK = """It fails:
Traceback (most recent call last):
  File "app/db.py", line 6, in migrate
    step(conn)
  File "app/steps.py", line 3, in add_column
    raise KeyError(name)
KeyError: 'email'
"""


def repo_env(tmp_path: Path, embedder, files: dict[str, str]):
    """A git repository of ``files`` in ``tmp_path``, indexed, and a maker of the
    BackendEnv over it (options as keywords), its model the scripted one."""
    root = make_repo(tmp_path / "repo", files)
    index = RepoIndex(root, Store(tmp_path / "data" / "index.lance"), embedder)
    index.refresh()

    def build(**options):
        return BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                          repo=index, data_dir=tmp_path / "home", session_id="s1",
                          options=options)
    return build
