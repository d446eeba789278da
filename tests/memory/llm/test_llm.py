from __future__ import annotations

import pytest

from memory.llm.client import LLM, LLMConfig, LLMError, check_model, default_model, import_litellm
from memory.settings import load
from memory.transcript import read_transcript


def test_default_model_follows_the_first_key_found():
    def of(env: dict[str, str]) -> str:
        return default_model(load(env=env))

    assert of({}) == "local/smollm2"
    assert of({"ANTHROPIC_API_KEY": "x"}) == "anthropic/claude-3-5-haiku-latest"
    both = {"DEEPSEEK_API_KEY": "x", "OPENAI_API_KEY": "y"}
    assert of(both) == "openai/gpt-4o-mini"
    assert of({"ENGRAM_MODEL": "ollama/qwen2.5-coder"}) == "ollama/qwen2.5-coder"


def test_model_strings_are_checked_with_clear_errors():
    check_model("ollama/qwen2.5-coder")
    check_model("local/smollm2")
    with pytest.raises(LLMError, match="unknown model 'nonsense-provider/x'"):
        check_model("nonsense-provider/x")
    with pytest.raises(LLMError, match="unknown local model"):
        check_model("local/gpt9")


def fail_with(monkeypatch, exc_factory, times):
    litellm = import_litellm()
    real = litellm.acompletion
    calls = {"n": 0}

    async def flaky(**kwargs):
        calls["n"] += 1
        if calls["n"] <= times:
            raise exc_factory()
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", flaky)
    return calls


def timeout():
    litellm = import_litellm()
    return litellm.Timeout(message="slow", model="scripted/test", llm_provider="scripted")


def rate_limited():
    litellm = import_litellm()
    return litellm.RateLimitError(message="429", model="scripted/test", llm_provider="scripted")


async def test_transient_faults_are_retried(script, monkeypatch):
    calls = fail_with(monkeypatch, rate_limited, times=2)
    llm = LLM(LLMConfig(model="scripted/test", retries=3, backoff=0.01))
    assert await llm.complete([{"role": "user", "content": "hi"}]) == "scripted answer"
    assert calls["n"] == 3
    assert llm.ledger.get("answer").calls == 1


async def test_exhausted_retries_end_in_a_clear_error(script, monkeypatch):
    fail_with(monkeypatch, timeout, times=99)
    llm = LLM(LLMConfig(model="scripted/test", retries=2, backoff=0.01))
    with pytest.raises(LLMError, match="timed out"):
        await llm.stream([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("fault", [timeout, rate_limited])
async def test_llm_fault_loses_no_turn(make_agent, monkeypatch, fault):
    agent = make_agent("full", retries=1)
    await agent.ask("first question")
    fail_with(monkeypatch, fault, times=99)
    turn = await agent.ask("the question that fails")
    assert not turn.ok and "scripted/test" in turn.error
    recorded = read_transcript(agent.transcript.path).of_type("turn")
    assert [t["user"] for t in recorded] == ["first question", "the question that fails"]
    assert "error" in recorded[1]
    assert len(agent.turns) == 2
    monkeypatch.undo()


async def test_malformed_stream_keeps_the_partial_answer(make_agent, monkeypatch):
    litellm = import_litellm()

    class Broken:
        def __init__(self):
            self.sent = False

        def __aiter__(self):
            return self

        async def __anext__(self):
            if not self.sent:
                self.sent = True
                return litellm.ModelResponseStream(choices=[{"delta": {"content": "half an "}}])
            return {"garbage": True}

    async def broken(**kwargs):
        return Broken()

    agent = make_agent("full", retries=1)
    monkeypatch.setattr(litellm, "acompletion", broken)
    turn = await agent.ask("stream please")
    assert not turn.ok and "malformed stream" in turn.error
    assert turn.assistant == "half an "
    recorded = read_transcript(agent.transcript.path).of_type("turn")[0]
    assert recorded["assistant"] == "half an " and "malformed" in recorded["error"]
    assert agent.backend.state_digest() == make_agent("full").backend.state_digest()


@pytest.mark.slow
async def test_real_embedded_model_answers(make_agent):
    agent = make_agent("rag", model="local/smollm2", max_answer_tokens=24)
    pieces: list[str] = []
    turn = await agent.ask("What does migrate do?", on_token=pieces.append)
    assert turn.ok, turn.error
    assert turn.assistant.strip() and "".join(pieces) == turn.assistant
    counts = turn.usage.get("answer")
    assert counts.prompt_tokens > 50 and 0 < counts.completion_tokens <= 24
    second = await agent.ask("And connect?")
    assert second.ok, second.error


def test_token_counts_are_kept_per_model_and_text(monkeypatch):
    """A text counted again for the same model is not tokenized again; another model's
    tokenizer counts it itself; a text over ``COUNTED_CHARS`` is counted every time."""
    from memory.llm import client as llm_module
    from memory.llm._litellm import import_litellm
    from memory.llm.client import LLM, LLMConfig

    asked: list[str] = []

    def counter(*, model: str, text: str) -> int:
        asked.append(model)
        return len(text) + (1 if model.endswith("a") else 2)

    monkeypatch.setattr(import_litellm(), "token_counter", counter)
    llm_module._counts.clear()
    first, second = LLM(LLMConfig(model="openai/a")), LLM(LLMConfig(model="openai/b"))
    text = "connect in app/db.py must use a timeout of 10 seconds."
    assert first.count_tokens(text) == len(text) + 1 and len(asked) == 1
    assert first.count_tokens(text) == len(text) + 1 and len(asked) == 1  # kept
    assert second.count_tokens(text) == len(text) + 2 and len(asked) == 2  # its own
    big = "x" * (llm_module.COUNTED_CHARS + 1)
    first.count_tokens(big)
    first.count_tokens(big)
    assert len(asked) == 4 and len(llm_module._counts) == 2
    llm_module._counts.clear()


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}},
          "required": ["n"], "additionalProperties": False}


async def test_structured_call_without_a_provider_mode_gets_the_prompt_and_one_retry(script):
    llm = LLM(LLMConfig(model="scripted/t", structured="prompt", backoff=0.0))
    script.push('{"n": 7}', 'Sure: ```json\n{"n": 2,}\n```')
    value = await llm.complete_json([{"role": "user", "content": "pick"}], SCHEMA)
    assert value == {"n": 2}
    first, second = script.calls[-2], script.calls[-1]
    assert "JSON Schema" in first[0]["content"] and '"enum":[1,2]' in first[0]["content"]
    assert second[-2] == {"role": "assistant", "content": '{"n": 7}'}
    assert "not usable" in second[-1]["content"] and "[1, 2]" in second[-1]["content"]
    stats = llm.stats.as_dict()
    assert stats["calls"] == stats["prompt"] == stats["parsed"] == 1
    assert (stats["retries"], stats["first_try"], stats["lenient"], stats["failed"]) == (1, 0, 1, 0)


async def test_structured_call_gives_up_after_the_retry_and_counts_it(script):
    from memory.llm.client import StructuredOutputError

    llm = LLM(LLMConfig(model="scripted/t", structured="prompt"))
    script.push("no idea", "still no idea")
    with pytest.raises(StructuredOutputError, match="no valid JSON after a retry"):
        await llm.complete_json([{"role": "user", "content": "pick"}], SCHEMA)
    assert llm.stats.failed == 1 and llm.ledger.get("memory").calls == 2


async def test_structured_modes_send_the_schema_the_provider_can_take(monkeypatch, script):
    litellm = import_litellm()
    sent = []
    real = litellm.acompletion

    async def spy(**kwargs):
        sent.append(kwargs.get("response_format"))
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    schema = {"type": "object", "additionalProperties": False, "required": ["s"],
              "properties": {"s": {"type": "string", "maxLength": 5}}}
    for mode in ("schema", "json", "grammar"):
        script.push('{"s": "abc"}')
        llm = LLM(LLMConfig(model="scripted/t", structured=mode))
        assert await llm.complete_json([{"role": "user", "content": "x"}], schema) == {"s": "abc"}
    strict, json_mode, grammar = sent
    assert strict["type"] == "json_schema" and "maxLength" not in str(strict)  # portable
    assert json_mode == {"type": "json_object"}
    assert grammar["json_schema"]["schema"] == schema  # the grammar gets all of it
    script.push('{"s": "too long"}', '{"s": "ok"}')
    llm = LLM(LLMConfig(model="scripted/t", structured="schema"))
    assert await llm.complete_json([{"role": "user", "content": "x"}], schema) == {"s": "ok"}


def test_structured_mode_follows_what_litellm_knows_of_the_model():
    assert LLM(LLMConfig(model="local/smollm2")).structured_mode() == "grammar"
    assert LLM(LLMConfig(model="openai/gpt-4o-mini")).structured_mode() == "schema"
    assert LLM(LLMConfig(model="anthropic/claude-3-5-haiku-latest")).structured_mode() in (
        "schema", "json")


async def test_a_hung_provider_is_cut_at_the_configured_timeout(monkeypatch):
    import asyncio
    import time

    async def hang(**kwargs):
        await asyncio.sleep(60)

    monkeypatch.setattr(import_litellm(), "acompletion", hang)
    llm = LLM(LLMConfig(model="scripted/test", retries=1, backoff=0.01, timeout=0.2))
    started = time.monotonic()
    with pytest.raises(LLMError, match="timed out"):
        await llm.stream([{"role": "user", "content": "hi"}])
    assert time.monotonic() - started < 2  # two tries of 0.2 s, not 2 x 180 s


@pytest.mark.parametrize("value", [0, -1, "soon", float("nan"), float("inf"), True, None])
def test_a_timeout_must_be_a_positive_number_of_seconds(value):
    from memory.llm.client import parse_timeout

    with pytest.raises(ValueError, match="positive number of seconds"):
        parse_timeout(value)
    assert parse_timeout("2.5") == 2.5


def test_the_embedded_model_runs_a_thread_per_core_unless_the_developer_sets_it(monkeypatch):
    from memory.llm.local import LocalModelError, local_threads

    monkeypatch.delenv("ENGRAM_LLM_THREADS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert local_threads() == 2
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    assert local_threads() == 8
    monkeypatch.setenv("ENGRAM_LLM_THREADS", " 3 ")
    assert local_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("ENGRAM_LLM_THREADS", bad)
        with pytest.raises(LocalModelError,
                           match=f"ENGRAM_LLM_THREADS='{bad}' is not a positive"):
            local_threads()


def test_the_embedded_window_is_4096_unless_the_developer_sets_it(monkeypatch):
    from memory.llm.local import local_context_window

    monkeypatch.delenv("ENGRAM_LOCAL_CONTEXT", raising=False)
    assert local_context_window() == 4096
    assert LLM(LLMConfig(model="local/smollm2")).context_window() == 4096
    monkeypatch.setenv("ENGRAM_LOCAL_CONTEXT", "8000")
    assert LLM(LLMConfig(model="local/smollm2")).context_window() == 8000
    monkeypatch.setenv("ENGRAM_LOCAL_CONTEXT", "99999")  # the model was trained to 8192
    assert local_context_window() == 8192
    monkeypatch.setenv("ENGRAM_LOCAL_CONTEXT", "10")
    assert local_context_window() == 1024
    monkeypatch.setenv("ENGRAM_LOCAL_CONTEXT", "lots")
    with pytest.raises(LLMError, match="ENGRAM_LOCAL_CONTEXT='lots' is not a number"):
        check_model("local/smollm2")
