"""The structured-mode step-down against a stub OpenAI-compatible endpoint on loopback:
a refused mode is stepped down at once, never re-sent as it was, and the mode that
worked is remembered per (model, api base) in the user cache."""

from __future__ import annotations

import json

import pytest

from memory.llm import structured
from memory.llm.client import LLM, LLMConfig, LLMError

from .stub_endpoint import Stub, serve

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}},
          "required": ["n"], "additionalProperties": False}
ASK = [{"role": "system", "content": "Pick a number."}, {"role": "user", "content": "pick"}]
# what llama-cpp-python's server answers a json_schema response format with
LLAMA_CPP_REFUSAL = (500, "1 validation error for ChatCompletionRequest response_format.type: "
                          "Input should be 'text' or 'json_object'")


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test its own user cache, and no mode remembered in this process."""
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENGRAM_API_BASE", raising=False)
    monkeypatch.delenv("ENGRAM_STRUCTURED", raising=False)
    structured._memo.clear()
    yield
    structured._memo.clear()


def llm_for(stub: Stub, model: str = "openai/stub", **config) -> LLM:
    return LLM(LLMConfig(model=model, api_base=stub.base, backoff=0.01, **config))


async def test_a_refused_json_schema_steps_down_without_resending_it(tmp_path):
    with serve(Stub(refuse={"schema": LLAMA_CPP_REFUSAL})) as stub:
        llm = llm_for(stub)
        assert await llm.complete_json(ASK, SCHEMA) == {"n": 2}
        # one json_schema request (refused: a 500 that would be retried 3 times
        # if it did not name the format), then the llama.cpp form, answered
        assert stub.modes() == ["schema", "schema_object"]
        assert stub.requests[1]["response_format"] == {"type": "json_object",
                                                       "schema": SCHEMA}
        assert llm.stats.refused == 1 and llm.stats.modes() == {"schema_object": 1}
        assert llm.structured_mode() == "schema_object" and llm.constrained()
        # the next call, and a new LLM for the same server, start at what worked
        await llm.complete_json(ASK, SCHEMA)
        await llm_for(stub).complete_json(ASK, SCHEMA)
        assert stub.modes() == ["schema", "schema_object", "schema_object", "schema_object"]
    cached = json.loads((tmp_path / "home" / "cache" / structured.CACHE_FILE).read_text())
    (entry,) = cached.values()
    assert entry["mode"] == "schema_object" and entry["refused"] == ["schema"]
    assert entry["api_base"] == stub.base and entry["model"] == "openai/stub"
    assert "key" not in json.dumps(cached).replace("api_base", "")


async def test_the_whole_ladder_is_walked_one_request_per_mode():
    refusals = {"schema": (400, "unsupported"), "schema_object": (422, "schema: extra field"),
                "ollama_format": (400, "format not allowed"),
                "json": (500, "response_format json_object failed to build a grammar")}
    with serve(Stub(refuse=refusals)) as stub:
        llm = llm_for(stub, model="hosted_vllm/stub")
        assert await llm.complete_json(ASK, SCHEMA) == {"n": 2}
        assert stub.modes() == list(structured.LADDER)
        assert stub.requests[2]["format"] == SCHEMA  # Ollama's field, in the body
        # below the schema modes the schema is in the prompt too
        assert '"enum":[1,2]' in stub.requests[-1]["messages"][0]["content"]
        assert llm.stats.refused == 4 and llm.stats.modes() == {"prompt": 1}


async def test_a_forced_mode_is_sent_once_and_its_refusal_is_an_error(monkeypatch):
    monkeypatch.setenv("ENGRAM_STRUCTURED", "schema")
    with serve(Stub(refuse={"schema": LLAMA_CPP_REFUSAL})) as stub:
        llm = llm_for(stub)
        with pytest.raises(LLMError, match=r"refused the structured mode schema \(forced"):
            await llm.complete_json(ASK, SCHEMA)
        assert stub.modes() == ["schema"] and llm.stats.failed == 1


async def test_a_server_error_that_is_not_about_the_format_is_retried_not_stepped_down():
    with serve(Stub(refuse={"schema": (503, "model is loading")})) as stub:
        llm = llm_for(stub, retries=2)
        with pytest.raises(LLMError, match="model is loading"):
            await llm.complete_json(ASK, SCHEMA)
        assert stub.modes() == ["schema"] * 3 and llm.stats.refused == 0


async def test_an_auth_failure_is_not_a_refusal_of_the_format():
    with serve(Stub(refuse={"schema": (401, "invalid api key")})) as stub:
        with pytest.raises(LLMError, match="invalid api key"):
            await llm_for(stub).complete_json(ASK, SCHEMA)
        assert stub.modes() == ["schema"]


async def test_a_model_without_a_server_is_not_cached(tmp_path, script):
    llm = LLM(LLMConfig(model="scripted/t", structured="prompt"))
    script.push('{"n": 1}')
    assert await llm.complete_json(ASK, SCHEMA) == {"n": 1}
    assert not (tmp_path / "home" / "cache").exists()


async def test_models_command_shows_the_learned_mode_and_forgets_it(capsys):
    from tui.cli import main

    with serve(Stub(refuse={"schema": LLAMA_CPP_REFUSAL})) as stub:
        await llm_for(stub).complete_json(ASK, SCHEMA)
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert f"openai/stub @ {stub.base}: schema_object; refused schema" in out
    assert main(["models", "--forget"]) == 0
    out = capsys.readouterr().out
    assert "forgot 1 learned" in out and "none yet" in out
