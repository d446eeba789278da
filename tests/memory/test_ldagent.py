from __future__ import annotations

import json

import pytest

from memory.backends.base import BackendEnv
from memory.backends.ldagent import LDAgentBackend, overlap_score
from memory.llm.client import LLM, LLMConfig
from memory.transcript import read_transcript
from memory.types import Turn

DAY = 86_400.0
NO_TRAITS = json.dumps({"developer": [], "assistant": []})


def backend(embedder, clock=lambda: 0.0, **options):
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/test", backoff=0.01)), embedder=embedder,
                     options=options)
    return LDAgentBackend(env, clock=clock)


def router(summaries: list[str], traits: str = NO_TRAITS):
    """Replies by prompt: event summaries in order, else persona traits."""
    queue = list(summaries)

    def reply(messages):
        if messages[0]["content"].startswith("You summarise a finished session"):
            return json.dumps({"summary": queue.pop(0)})
        return traits
    return reply


def at(index: int, user: str, when: float) -> Turn:
    return Turn(index, user, "ok", started=when, finished=when + 1)


async def test_every_n_turns_the_session_closes_into_an_event(embedder, script):
    ld = backend(embedder, ldagent_session_turns=2)
    script.default = router(["parse_date returns UTC."])
    await ld.observe(at(0, "parse_date in utils/dates.py must return UTC.", 0))
    await ld.observe(at(1, "And format_date prints the offset.", 10))
    assert ld.events == [] and len(ld.session) == 2
    await ld.observe(at(2, "Now the db pool size.", 20))  # the third turn opens session 2
    assert [t.index for t in ld.session] == [2]
    (event,) = ld.events
    assert event.summary == "parse_date returns UTC." and event.turns == [0, 1]
    assert {"parse_date", "utils/dates.py", "format_date"} <= set(event.topics)
    session_prompt = next(c for c in script.calls if "Session:" in c[-1]["content"])
    assert "Developer: parse_date in utils/dates.py" in session_prompt[-1]["content"]
    assert "EVENT" in [r["op"] for r in ld.drain_records()]


async def test_an_idle_gap_of_an_hour_closes_the_session(embedder, script):
    ld = backend(embedder)
    script.default = router(["first session"])
    await ld.observe(at(0, "parse_date must return UTC.", 0))
    await ld.observe(at(1, "format_date too.", 3000))  # 50 minutes later: same session
    assert ld.events == []
    await ld.observe(at(2, "db pool size is 20.", 3001 + 3601))
    assert [e.summary for e in ld.events] == ["first session"]


async def test_retrieval_scores_topic_overlap_with_time_decay(embedder, script):
    now = 300 * DAY
    ld = backend(embedder, clock=lambda: now, ldagent_session_turns=1)
    script.default = router(["old dates event", "db event", "recent dates event", "x"])
    await ld.observe(at(0, "parse_date must return UTC timezone.", 0))
    await ld.observe(at(1, "The db pool size is 20 connections.", 100 * DAY))
    await ld.observe(at(2, "parse_date must return UTC timezone.", 200 * DAY))
    await ld.observe(at(3, "unrelated closing turn", 250 * DAY))
    assert [e.summary for e in ld.events] == ["old dates event", "db event",
                                              "recent dates event"]
    topics = ["parse_date", "UTC"]
    vector = embedder.embed([",".join(topics)])[0]
    scored = ld.scored_events(topics, vector, now)
    assert [e.summary for e, _ in scored] == ["recent dates event", "old dates event"]
    overlap = overlap_score(topics, ld.events[0].topics)
    assert scored[0][1] == pytest.approx(overlap * 2.718281828 ** (-1e-7 * (now - 200 * DAY
                                                                             - 1)), rel=1e-6)
    assert scored[0][1] > scored[1][1]
    before = ld.state_digest()
    pack = await ld.context("Which timezone does parse_date return?", budget=10_000)
    memory = [s.text for s in pack.of_kind("memory")]
    assert memory[0].endswith("recent dates event") and len(memory) == 1  # LD-Agent: top 1
    assert ld.state_digest() == before


def test_overlap_score_is_the_average_of_both_shares():
    assert overlap_score(["a", "b"], ["a", "c", "d", "e"]) == pytest.approx(0.5 * 0.5 + 0.5 * 0.25)
    assert overlap_score([], ["a"]) == 0.0


async def test_personas_are_updated_each_turn(embedder, script):
    ld = backend(embedder)
    script.push(json.dumps({"developer": ["I maintain the billing service."],
                            "assistant": ["I add type hints."]}),
                json.dumps({"developer": ["I maintain the billing service.", "I use pytest."],
                            "assistant": []}))
    await ld.observe(at(0, "I maintain the billing service.", 0))
    first = ld.state_digest()
    await ld.observe(at(1, "I use pytest.", 10))
    assert ld.personas == {"developer": ["I maintain the billing service.", "I use pytest."],
                           "assistant": ["I add type hints."]}
    assert ld.state_digest() != first
    ops = [(r["op"], r["id"]) for r in ld.drain_records()]
    assert ops == [("PERSONA", "developer"), ("PERSONA", "assistant"), ("PERSONA", "developer")]
    pack = await ld.context("tests", budget=10_000)
    texts = [s.text for s in pack.of_kind("memory")]
    assert texts[0].startswith("The developer:\n- I maintain the billing service.")
    assert [s.source for s in pack.of_kind("history")][::2] == ["turn:0", "turn:1"]


async def test_a_failed_summary_keeps_the_session_open(embedder, script):
    ld = backend(embedder, ldagent_session_turns=1)
    script.default = NO_TRAITS
    await ld.observe(at(0, "parse_date must return UTC.", 0))
    script.push("not json", "not json either")
    await ld.observe(at(1, "format_date too.", 10))
    assert ld.events == [] and [t.index for t in ld.session] == [0, 1]
    assert "skipped" in [r["op"] for r in ld.drain_records()]


@pytest.mark.slow
async def test_real_embedded_model_summarises_and_extracts(make_agent):
    from memory.backends import registry

    agent = make_agent("full", model="local/smollm2", max_answer_tokens=24)
    agent.env.options["ldagent_session_turns"] = 2
    agent.backend = registry.create("ldagent", agent.env)
    for query in ["I maintain app/dates.py and I always use type hints.",
                  "parse_date in app/dates.py must return UTC datetimes.",
                  "Which timezone does parse_date return?"]:
        assert (await agent.ask(query)).ok
    records = read_transcript(agent.transcript.path).of_type("memory")
    print("memory ops:", [(r["op"], r["text"][:60]) for r in records])
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    assert [r for r in records if r["op"] == "EVENT"], records
    assert agent.backend.events[0].summary
