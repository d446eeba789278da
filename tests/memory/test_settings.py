"""Settings as one value: config file, then environment, then flags."""

from __future__ import annotations

import json
import pickle

import pytest

from memory import settings
from memory.llm.client import LLM, LLMConfig, default_model


def _config(tmp_path, data: dict) -> dict[str, str]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return {"ENGRAM_CONFIG": str(path)}


def test_a_later_source_wins_and_each_says_where_it_came_from(tmp_path):
    env = _config(tmp_path, {"api_base": "http://config:1/v1", "structured": "json",
                             "model": "openai/from-config", "local_context": 2048})
    env["ENGRAM_STRUCTURED"] = "prompt"
    env["ENGRAM_API_BASE"] = "http://env:2/v1"
    got = settings.load({"api_base": "http://flag:3/v1", "structured": None}, env=env)
    assert (got.api_base, got.source("api_base")) == ("http://flag:3/v1", "flag")
    assert (got.structured, got.source("structured")) == ("prompt", "env $ENGRAM_STRUCTURED")
    assert (got.model, got.source("model")) == ("openai/from-config", "config file")
    assert (got.local_context, got.source("local_context")) == ("2048", "config file")
    assert (got.sandbox, got.source("sandbox")) == ("", "default")
    assert got.source("config_path") == "env $ENGRAM_CONFIG"


def test_keys_are_named_never_kept_and_the_value_travels_by_pickle(tmp_path):
    env = {**_config(tmp_path, {}), "OPENAI_API_KEY": "sk-secret-value-1234567890"}
    got = settings.load(env=env)
    assert got.keys == ("OPENAI_API_KEY",) and default_model(got) == "openai/gpt-4o-mini"
    assert "sk-secret" not in repr(got)
    assert pickle.loads(pickle.dumps(got)) == got  # replay's config to a Ray worker


def test_an_llm_routes_by_the_settings_it_is_handed_not_the_environment(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("ENGRAM_API_BASE", "http://env:2/v1")
    mine = settings.load({"api_base": "http://flag:3/v1"})
    assert LLM(LLMConfig(model="openai/m", settings=mine)).route.api_base == "http://flag:3/v1"
    assert LLM(LLMConfig(model="openai/m")).route.api_base == "http://env:2/v1"
    # an embedded model never takes an api base
    assert LLM(LLMConfig(model="local/smollm2", settings=mine)).route.api_base is None


def test_a_scope_undoes_what_was_installed_inside_it():
    before = settings.current()
    with settings.scope():
        settings.install(settings.load({"api_base": "http://flag:3/v1"}))
        assert settings.current().api_base == "http://flag:3/v1"
    assert settings.current().api_base == before.api_base


def test_an_unknown_flag_is_refused():
    with pytest.raises(ValueError, match="nonsense"):
        settings.load({"nonsense": 1})
