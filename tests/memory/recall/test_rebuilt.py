"""``engram memories`` for the backends that keep their memory in the process."""

from __future__ import annotations

import json
import re
import sys

from memory.recall._rebuilt import list_rebuilt
from tests.memory.test_memgpt import call
from tests.memory.test_memgpt import router as memgpt_router
from tui.cli import main

QUERIES = ["parse_date must return UTC.", "connect needs a timeout of 5 s.",
           "render_form escapes HTML.", "migrate stops at the first failure."]


def reply(messages):
    """Every memory prompt of compact, amem and ldagent answered; answers are 'ok'."""
    system, last = messages[0]["content"], messages[-1]["content"]
    said = re.search(r"Developer: (.*)", last)
    if system.startswith("You maintain the running summary"):
        return json.dumps({"requirements": ["parse_date returns UTC."], "decisions": [],
                           "revisions": [], "open_errors": [], "code_written": []})
    if system.startswith("You index the notes"):
        return json.dumps({"keywords": ["kw"], "context": f"About {said.group(1)}",
                           "tags": ["requirement"]})
    if system.startswith("You organise a coding assistant's memory notes"):
        n = len(re.findall(r"^\[\d+\]", last, re.M))
        return json.dumps({"should_evolve": True, "actions": ["strengthen"],
                           "suggested_connections": [0], "tags_to_update": [],
                           "new_context_neighborhood": [""] * n,
                           "new_tags_neighborhood": [[]] * n})
    if system.startswith("You summarise a finished session"):
        return json.dumps({"summary": "The developer set parse_date to UTC."})
    if system.startswith("You extract personas"):
        return json.dumps({"developer": ["I use UTC everywhere."], "assistant": []})
    return "ok"


async def converse(make_agent, script, name, **options):
    agent = make_agent(name)
    agent.env.options.update(options)
    agent.backend = agent.backends.create(name, agent.env)
    agent.start_session("s1", "test")
    for query in QUERIES:
        assert (await agent.ask(query)).ok
    return agent


async def test_compact_lists_its_running_summary(make_agent, script):
    script.default = reply
    agent = await converse(make_agent, script, "compact", compact_turns=2)
    listing = list_rebuilt(agent.transcript.path, "compact")
    assert listing.splitlines()[1].startswith("running summary of turns 1-")
    assert "  Requirements:\n  - parse_date returns UTC." in listing


async def test_amem_lists_its_notes_and_links(make_agent, script):
    script.default = reply
    agent = await converse(make_agent, script, "amem")
    listing = list_rebuilt(agent.transcript.path, "amem")
    assert "4 notes:" in listing and "n0  About parse_date must return UTC. [kw]" in listing
    assert "links: n" in listing


async def test_ldagent_lists_events_and_personas(make_agent, script):
    script.default = reply
    agent = await converse(make_agent, script, "ldagent", ldagent_session_turns=1)
    listing = list_rebuilt(agent.transcript.path, "ldagent")
    assert "3 events:" in listing and "e0  The developer set parse_date to UTC." in listing
    assert "persona of the developer: 1 traits\n  - I use UTC everywhere." in listing


async def test_memgpt_lists_core_blocks_and_archival(make_agent, script):
    script.default = memgpt_router([
        call("core_memory_append", label="task", content="parse_date returns UTC."),
        call("archival_memory_insert", content="parse_date returns UTC.", heartbeat=False)])
    agent = await converse(make_agent, script, "memgpt")
    listing = list_rebuilt(agent.transcript.path, "memgpt")
    assert "  <task> 23 characters\n    parse_date returns UTC." in listing
    assert "  <developer> 0 characters" in listing
    assert "archival memory: 1 passages" in listing


async def test_a_backend_switched_to_is_listed_from_its_catch_up(make_agent, script):
    script.default = reply
    agent = make_agent("full")
    agent.env.options["ldagent_session_turns"] = 1
    agent.start_session("s1", "test")
    for query in QUERIES[:2]:
        await agent.ask(query)
    assert list_rebuilt(agent.transcript.path, "ldagent") is None
    await agent.switch("ldagent")
    listing = list_rebuilt(agent.transcript.path, "ldagent")
    assert "1 events:" in listing  # the catch-up closed the first session
    await agent.switch("full")
    await agent.ask(QUERIES[2])
    await agent.switch("ldagent")  # a fresh instance: caught up again, not added twice
    assert "2 events:" in list_rebuilt(agent.transcript.path, "ldagent")


def test_memories_command_lists_memgpt(demo_repo, tmp_path, script, monkeypatch, capsys):
    script.default = memgpt_router([call("core_memory_append", label="developer",
                                         content="I use tabs.", heartbeat=False)])
    monkeypatch.setattr(sys, "stdin", iter(["I use tabs.\n"]))
    data = str(tmp_path / "data")
    assert main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "memgpt", "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["memories", "--repo", str(demo_repo), "--backend", "memgpt",
                 "--data-dir", data]) == 0
    assert "<developer> 11 characters\n    I use tabs." in capsys.readouterr().out
    assert main(["memories", "--repo", str(demo_repo), "--backend", "amem",
                 "--data-dir", data]) == 2
    assert "amem never ran in this session" in capsys.readouterr().err
