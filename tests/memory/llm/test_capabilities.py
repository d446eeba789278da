"""What a model is offered (memory/llm/capabilities.py): the embedded model neither the
repository tools nor the edit format, a served or API model both, a config alias what it
says; the Workbench offers accordingly and follows a model change."""

from __future__ import annotations

import json

import pytest

from memory.acting.tools.consent import ConsentPolicy
from memory.acting.workbench import EDITING, Workbench
from memory.backends import BackendEnv, registry
from memory.llm.capabilities import EMBEDDED, EVERYTHING, capabilities_of
from memory.llm.client import LLM, LLMConfig
from memory.llm.models import ModelConfigError
from memory.turn.agent import Agent, AgentConfig

from ...conftest import make_repo


@pytest.fixture
def config(tmp_path, monkeypatch):
    path = tmp_path / "config.json"
    monkeypatch.setenv("ENGRAM_CONFIG", str(path))

    def write(models: dict) -> None:
        path.write_text(json.dumps({"models": models}))
    write({})
    return write


def test_profiles_known_and_from_the_config(config):
    assert capabilities_of("local/smollm2") == EMBEDDED
    assert capabilities_of("openai/gpt-4o-mini") == EVERYTHING
    assert capabilities_of("hosted_vllm/qwen2.5-coder") == EVERYTHING
    config({"tiny": {"model": "local/smollm2"},
            "tiny-tools": {"model": "local/smollm2", "tools": True},
            "coder": {"model": "openai/qwen", "api_base": "http://localhost:8000/v1",
                      "edits": False}})
    assert capabilities_of("tiny") == EMBEDDED  # an alias says nothing: what is known
    tiny = capabilities_of("tiny-tools")
    assert (tiny.tools, tiny.edits, tiny.source) == (True, False, "config")
    coder = capabilities_of("coder")
    assert (coder.tools, coder.edits) == (True, False)
    assert "no edits" in coder.notice("coder") and "no tools" not in coder.notice("coder")
    assert EVERYTHING.notice("x") == ""
    notice = EMBEDDED.notice("local/smollm2")
    assert "no tools and no edits" in notice and "/model NAME" in notice


def test_a_bad_value_in_the_config_is_refused_plainly(config):
    config({"tiny": {"model": "local/smollm2", "tools": "yes"}})
    with pytest.raises(ModelConfigError, match='"tools" is true or false'):
        capabilities_of("tiny")


def _agent(tmp_path, model: str, embedder) -> Agent:
    llm = LLM(LLMConfig(model=model, backoff=0.01))
    env = BackendEnv(llm=llm, embedder=embedder, data_dir=tmp_path / "home", session_id="s")
    return Agent(registry.create("full", env), llm, env, config=AgentConfig())


def test_the_workbench_offers_the_embedded_model_nothing_and_follows_a_switch(
        tmp_path, config, embedder, script):
    repo = make_repo(tmp_path / "repo", {"app.py": "def f():\n    return 1\n"})
    agent = _agent(tmp_path, "local/smollm2", embedder)
    bench = Workbench(agent, repo, ConsentPolicy.deny_all())
    assert bench.offered == EMBEDDED and agent.tools is None and agent.examples == []
    assert EDITING not in agent.config.system_prompt
    agent.llm = agent.env.llm = LLM(LLMConfig(model="scripted/t"))
    assert bench.offer() == EVERYTHING
    assert agent.tools is bench.tools and agent.examples
    assert agent.config.system_prompt.count(EDITING) == 1
    agent.llm = agent.env.llm = LLM(LLMConfig(model="local/smollm2"))
    bench.offer()
    assert agent.tools is None and EDITING not in agent.config.system_prompt
    forced = Workbench(agent, repo, ConsentPolicy.deny_all(), offer=EVERYTHING)  # replay's
    assert forced.offered == EVERYTHING and agent.tools is forced.tools


async def test_an_edit_block_from_a_model_offered_no_edits_is_not_proposed(
        tmp_path, config, embedder, script):
    from memory.types import Turn

    repo = make_repo(tmp_path / "repo", {"app.py": "def f():\n    return 1\n"})
    bench = Workbench(_agent(tmp_path, "local/smollm2", embedder), repo,
                      ConsentPolicy.deny_all())
    block = ("@@@ EDIT app.py\n@@@ SEARCH\n    return 1\n@@@ REPLACE\n    return 2\n"
             "@@@ END\n")
    assert bench.propose(Turn(index=0, user="q", assistant=block)) is None
    assert (repo / "app.py").read_text() == "def f():\n    return 1\n"
