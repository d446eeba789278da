"""One real turn of the embedded SmolLM2 through the tool loop with the repository
tools: only the mechanics are checked (the loop ends within its bound, every call it
made is recorded, what it sent fit the window), whatever the model manages."""

from __future__ import annotations

import pytest

from memory.acting.tools.box import RepoTools
from memory.transcript import read_transcript
from memory.turn.agent import AgentConfig

pytestmark = pytest.mark.slow
STEPS = 3


async def test_a_real_small_model_turn_through_the_repository_tools(make_agent):
    agent = make_agent("full", model="local/smollm2")
    agent.config = AgentConfig(max_answer_tokens=48, max_tool_steps=STEPS)
    agent.tools = RepoTools(agent.repo.root, agent.repo, constrained=agent.llm.constrained())
    names = {t.name for t in agent.tools.tools()}
    turn = await agent.ask("What does connect in app/db.py do with its timeout? "
                           "Read the file before you answer.")
    tools = turn.meta["tools"]
    print("tool loop:", tools)
    assert turn.ok, turn.error
    assert 1 <= tools["steps"] <= STEPS and len(tools["calls"]) <= tools["steps"]
    assert tools["peak"] <= tools["limit"] < agent.llm.context_window()
    assert all(c["function"] in names for c in tools["calls"])
    agent.transcript.close()
    recorded = read_transcript(agent.transcript.path).tool_calls
    assert [(r.turn, r.step, r.function, r.result) for r in recorded] == [
        (0, c["step"], c["function"], c["result"]) for c in tools["calls"]]
    assert turn.usage.get("memory").calls >= tools["steps"]
