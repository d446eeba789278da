"""The embedded model under JSON-Schema grammars: whatever it writes validates.

Schemas are drawn by hypothesis in the shapes engram's prompts use on the grammar
path (objects with required keys; strings from an enum or a short pattern; integer
enums; consts; arrays with bounds, of enum strings or of objects; per-position
items with anyOf), and
the real SmolLM2 samples under each at a high temperature, so the grammar, not the
model's habits, is what keeps the output valid.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.llm._schema import validate

pytestmark = pytest.mark.slow

WORDS = st.text(alphabet="abcdefghij klm", min_size=1, max_size=12).map(str.strip).filter(bool)
KEYS = st.from_regex(r"[a-z]{1,8}", fullmatch=True)


def obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


ENUMS = st.lists(WORDS, min_size=1, max_size=4, unique=True).map(
    lambda xs: {"type": "string", "enum": xs})
leaf = st.one_of(
    ENUMS,
    st.just({"type": "string", "pattern": "^[a-z_]{1,8}$"}),
    st.lists(st.integers(-1, 9), min_size=1, max_size=4, unique=True).map(
        lambda xs: {"type": "integer", "enum": xs}),
    st.sampled_from([{"const": -1}, {"const": ""}, {"const": "ADD"}, {"type": "boolean"}]),
    st.tuples(st.integers(0, 3), ENUMS).map(
        lambda t: {"type": "array", "maxItems": t[0], "items": t[1]}),
)


def nest(inner: st.SearchStrategy) -> st.SearchStrategy:
    objects = st.dictionaries(KEYS, inner, min_size=1, max_size=3).map(obj)
    return st.one_of(
        objects,
        st.tuples(objects, st.integers(0, 2)).map(
            lambda t: {"type": "array", "items": t[0], "maxItems": t[1]}),
        st.lists(objects, min_size=1, max_size=2).map(
            lambda vs: {"type": "array", "prefixItems": [{"anyOf": vs}],
                        "minItems": 1, "maxItems": 1}),
    )


schemas = st.dictionaries(KEYS, st.recursive(leaf, nest, max_leaves=4),
                          min_size=1, max_size=3).map(obj)


@pytest.fixture(scope="module")
def model():
    from memory.llm.local import load_local_model

    return load_local_model("smollm2")


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(schema=schemas, seed=st.integers(0, 2**16))
def test_output_under_a_schema_grammar_always_validates(model, schema, seed):
    messages = [{"role": "system", "content": "Answer in JSON."},
                {"role": "user", "content": "Describe a function of the repository."}]
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    out = model.generate(messages, {"max_tokens": 200, "temperature": 1.0, "seed": seed,
                                    "response_format": fmt})
    value = json.loads(out.text)  # strict JSON, no repair
    validate(value, schema)


def test_free_text_stays_free_and_counts_tokens(model):
    out = model.generate([{"role": "user", "content": "Say hello."}], {"max_tokens": 12})
    assert out.text.strip() and 0 < out.completion_tokens <= 12 and out.prompt_tokens > 3


def test_a_call_resumes_from_the_state_of_an_earlier_prompt_it_shares(model, monkeypatch):
    """Prompts A, then B (another prefix), then A's continuation: the third call loads
    A's state from the cache instead of evaluating A's prefix again."""
    system = {"role": "system", "content": "You extract facts. " * 60}
    other = {"role": "system", "content": "You answer questions. " * 60}
    ask = [system, {"role": "user", "content": "connect uses a 10 s timeout."}]
    model.generate(ask, {"max_tokens": 4})
    model.generate([other, {"role": "user", "content": "Which timeout?"}], {"max_tokens": 4})
    loaded: list[int] = []
    load = model.llama.load_state
    monkeypatch.setattr(model.llama, "load_state",
                        lambda state: (loaded.append(state.n_tokens), load(state))[1])
    again = [system, {"role": "user", "content": "connect retries three times."}]
    assert model.generate(again, {"max_tokens": 4}).prompt_tokens > 250
    assert loaded and loaded[0] > 240  # A's system prompt was not evaluated again


def test_the_state_cache_counts_the_logits_each_state_keeps():
    """Each kept state holds the KV state and a logits copy; the bound counts both (the
    library's own count left out the logits: 12 states of SmolLM2 took 1.7 GB)."""
    from types import SimpleNamespace

    import numpy as np

    from memory.llm.local.model import _state_cache

    cache = _state_cache(100 << 20)
    for n in range(5):  # 23 MB of KV state and 10 MB of logits each
        cache[[n, 1, 2]] = SimpleNamespace(llama_state_size=23 << 20,
                                           scores=np.zeros((10 << 18,), np.float32),
                                           input_ids=np.zeros(3, np.intc))
    assert len(cache.cache_state) == 3 and cache.cache_size <= 100 << 20
    assert [k[0] for k in cache.cache_state] == [2, 3, 4]  # the oldest left first


def test_a_prompt_over_the_window_is_refused_clearly(model):
    from memory.llm.local import LocalModelError

    with pytest.raises(LocalModelError, match="exceeds the 4096-token window"):
        model.generate([{"role": "user", "content": "word " * 9000}], {"max_tokens": 8})


QUESTION = "How are prices parsed?"
LOOPING = [  # the agent's prompt without a repository: SmolLM2 decoding greedily loops
    {"role": "system", "content": "You are engram, a coding assistant in a developer's "
     "terminal, talking about the git repository (no repository). Answer precisely and briefly. "
     "Follow the developer's latest decisions: when a requirement was revised, the newer "
     "one wins. When you write code, use the repository's own names and conventions shown "
     "below, and give complete code blocks."},
    {"role": "user", "content": QUESTION},
]


def test_free_text_is_sampled_as_the_card_says_and_a_loop_is_stopped(model, monkeypatch):
    from memory.llm.local import GREEDY, LOCAL_MODELS
    from memory.llm.repetition import find_repetition

    assert model.sampling == LOCAL_MODELS["smollm2"].sampling
    assert model.sampling.temperature > 0 and model.sampling.repeat_penalty > 1
    model.llama.reset()  # read the prompt afresh: a cached prefix shifts greedy choices
    sampled = model.generate(LOOPING, {"max_tokens": 400})
    assert sampled.repeated is None and find_repetition(sampled.text) is None
    assert sampled.text.strip()

    monkeypatch.setattr(model, "sampling", GREEDY)  # what engram did before
    model.llama.reset()
    greedy = model.generate(LOOPING, {"max_tokens": 400})
    assert greedy.repeated is not None  # it looped, and was stopped there
    assert greedy.completion_tokens < 400
    assert find_repetition(greedy.text) is None and greedy.text.strip()
    assert len(greedy.text) == len(greedy.text[:greedy.repeated.keep].rstrip())


async def test_the_agent_stops_a_looping_answer_of_the_real_model(model, make_agent,
                                                                   monkeypatch):
    from memory.llm.local import GREEDY
    from memory.llm.repetition import find_repetition
    from memory.transcript import read_transcript

    agent = make_agent("empty", model="local/smollm2", repo=False, max_answer_tokens=400)
    monkeypatch.setattr(model, "sampling", GREEDY)
    model.llama.reset()
    pieces: list[str] = []
    turn = await agent.ask(QUESTION, on_token=pieces.append)
    assert turn.ok and turn.meta["stopped"]["reason"] == "repetition"
    assert find_repetition(turn.assistant) is None
    assert find_repetition("".join(pieces)) is not None  # what streamed did repeat
    assert turn.usage.get("answer").completion_tokens < 400
    record = read_transcript(agent.transcript.path).of_type("turn")[-1]
    assert record["meta"]["stopped"]["times"] >= 3


def test_an_enum_of_quoted_statements_makes_a_grammar_the_model_keeps(model):
    """A statement with quotes or a backslash among the choices (LoCoMo's turns: `Ana
    said, "..."`) is a valid grammar literal, and the model writes one of the choices."""
    said = ['Ana said, "Hey Ben, long time no talk!"', "a path C:\\tmp", "plain"]
    schema = obj({"fact": {"type": "string", "enum": said}})
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    messages = [{"role": "system", "content": "Answer in JSON."},
                {"role": "user", "content": "Pick the greeting."}]
    out = model.generate(messages, {"max_tokens": 60, "temperature": 0.0,
                                    "response_format": fmt})
    assert json.loads(out.text)["fact"] in said


def test_grammar_literals_escape_backslashes():
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from memory.llm.local.model import escape_backslashes

    escape_backslashes()
    escape_backslashes()  # once is enough: a second call changes nothing
    gbnf = json_schema_to_gbnf(json.dumps({"enum": ['say "hi"', "a\\b"]}))
    assert r'"\"say \\\"hi\\\"\""' in gbnf and r'"\"a\\\\b\""' in gbnf
