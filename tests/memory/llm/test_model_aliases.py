"""Naming a server: ``--api-base``, model aliases in the user config, keys kept out of
the config, and clear errors (exit 2, nothing recorded) for a bad URL or alias."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from memory.llm import structured
from memory.llm.client import LLM, LLMConfig, LLMError, check_model
from tui.cli import main

from .stub_endpoint import Stub, serve


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENGRAM_CONFIG", raising=False)
    for var in ("ENGRAM_API_BASE", "ENGRAM_STRUCTURED", "ENGRAM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    structured._memo.clear()
    return tmp_path / "home"


def write_config(home, data) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(data))


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def recorded(data) -> list:
    return list(data.glob("repos/*/sessions/*.jsonl"))


def test_an_alias_names_model_server_and_mode(home):
    write_config(home, {"models": {"coder": {
        "model": "openai/qwen2.5-coder-7b", "api_base": "http://localhost:8000/v1/",
        "structured": "schema_object", "api_key_env": "CODER_KEY"}}})
    llm = LLM(LLMConfig(model="coder"))
    assert (llm.model, llm.target) == ("coder", "openai/qwen2.5-coder-7b")
    assert llm.route.api_base == "http://localhost:8000/v1" and llm.route.served
    assert llm.structured_mode() == "schema_object"
    with pytest.raises(LLMError, match=r"\$CODER_KEY is not set"):
        llm._kwargs([], None, None, False)


def test_keys_in_the_config_are_refused(home):
    write_config(home, {"models": {"coder": {"model": "openai/x", "api_key": "sk-secret"}}})
    with pytest.raises(LLMError, match="keys are never kept in the config") as caught:
        check_model("coder")
    assert "sk-secret" not in str(caught.value)


def test_a_key_is_read_from_the_environment_or_a_key_file_at_call_time(home, tmp_path,
                                                                          monkeypatch):
    key_file = tmp_path / "coder.key"
    key_file.write_text("from-the-file\n")
    write_config(home, {"models": {
        "coder": {"model": "openai/x", "api_base": "http://h:1/v1", "api_key_env": "K"},
        "filed": {"model": "openai/x", "api_base": "http://h:1/v1",
                  "api_key_file": str(key_file)},
        "bare": {"model": "openai/x", "api_base": "http://h:1/v1"}}})
    monkeypatch.setenv("K", "from-the-env")
    assert LLM(LLMConfig(model="coder"))._kwargs([], None, None, False)["api_key"] == \
        "from-the-env"
    assert LLM(LLMConfig(model="filed"))._kwargs([], None, None, False)["api_key"] == \
        "from-the-file"
    assert LLM(LLMConfig(model="bare"))._kwargs([], None, None, False)["api_key"] == "no-key"
    assert "from-the" not in repr(LLM(LLMConfig(model="coder")).route)


@pytest.mark.parametrize("base", ["localhost:8000", "ftp://h/v1", "http://", "http://h:x/v1"])
def test_a_bad_api_base_is_a_clear_error(base):
    with pytest.raises(LLMError, match=r"not an http|bad port"):
        check_model("openai/x", api_base=base)


def test_an_api_base_that_does_not_answer_is_a_clear_error():
    base = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(LLMError, match=f"cannot reach the api base {base}"):
        check_model("openai/x", api_base=base)


@pytest.mark.parametrize("argv, said", [
    (["--model", "nosuch"], "unknown model 'nosuch': not an alias"),
    (["--model", "openai/x", "--api-base", "localhost:8000"], "is not an http(s) URL"),
    (["--model", "openai/x", "--api-base", "http://127.0.0.1:{port}/v1"], "cannot reach"),
    (["--api-base", "http://127.0.0.1:8000/v1"], "name its model with --model"),
])
def test_ask_and_chat_refuse_a_bad_model_or_base_and_record_nothing(
        demo_repo, tmp_path, capsys, monkeypatch, argv, said):
    argv = [a.replace("{port}", str(closed_port())) for a in argv]
    data = tmp_path / "data"
    monkeypatch.setattr(sys, "stdin", iter(["hello\n"]))
    for command in (["ask", "hi"], ["chat", "--headless"]):
        code = main([*command, "--repo", str(demo_repo), "--data-dir", str(data), *argv])
        assert code == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err
    assert recorded(data) == []


def test_the_app_refuses_an_unknown_alias_before_it_opens(demo_repo, tmp_path, capsys):
    data = tmp_path / "data"
    assert main([str(demo_repo), "--data-dir", str(data), "--model", "nosuch"]) == 2
    assert "not an alias" in capsys.readouterr().err
    assert main([str(demo_repo), "--data-dir", str(data), "--model", "openai/x",
                 "--api-base", "nope"]) == 2
    assert recorded(data) == []


def test_ask_through_an_alias_reaches_its_server_and_records_the_alias(
        demo_repo, tmp_path, home, capsys):
    data = tmp_path / "data"
    with serve(Stub(reply="The forms are validated by validate_input.")) as stub:
        write_config(home, {"models": {"coder": {"model": "openai/served-coder",
                                                 "api_base": stub.base}}})
        code = main(["ask", "how are forms validated?", "--repo", str(demo_repo),
                     "--data-dir", str(data), "--model", "coder", "--backend", "rag"])
        assert code == 0
    assert "validated by validate_input" in capsys.readouterr().out
    assert stub.requests[-1]["model"] == "served-coder"
    assert "/v1/models" in stub.paths[0]  # the base was checked before the session opened
    (transcript,) = recorded(data)
    assert '"model":"coder"' in transcript.read_text()


def test_slash_model_switches_to_an_alias(home):
    from tui.session import usable_llm

    with serve(Stub()) as stub:
        write_config(home, {"models": {"coder": {"model": "openai/served",
                                                 "api_base": stub.base}}})
        llm = usable_llm(LLM(LLMConfig(model="scripted/t")), "coder")
        assert (llm.model, llm.target, llm.route.api_base) == ("coder", "openai/served",
                                                                stub.base)
    with pytest.raises(ValueError, match="not an alias"):
        usable_llm(llm, "nosuch")


def test_models_says_where_each_setting_came_from(home, monkeypatch, capsys):
    write_config(home, {"structured": "json", "llm_threads": 1})
    monkeypatch.delenv("ENGRAM_LLM_THREADS", raising=False)  # an xdist worker sets it (conftest)
    monkeypatch.setenv("ENGRAM_STRUCTURED", "prompt")
    monkeypatch.setenv("ENGRAM_LOCAL_CONTEXT", "2048")
    assert main(["models", "--model", "openai/m", "--api-base", "http://127.0.0.1:9/v1"]) == 0
    out = capsys.readouterr().out
    assert "api_base       http://127.0.0.1:9/v1  (flag)" in out
    assert "model          openai/m  (flag)" in out
    assert "structured     prompt  (env $ENGRAM_STRUCTURED)" in out  # env over the config
    assert "llm_threads    1  (config file)" in out
    assert "local_context  2048  (env $ENGRAM_LOCAL_CONTEXT)" in out
    assert "sandbox        -  (default)" in out
    # the command's flags end with it: the next command sees the environment only
    from memory.settings import current

    assert current().api_base == "" and current().model == ""
