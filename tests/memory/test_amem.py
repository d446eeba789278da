from __future__ import annotations

import json

import numpy as np
import pytest

from memory.backends.amem import AMemBackend
from memory.backends.base import BackendEnv
from memory.llm.client import LLM, LLMConfig
from memory.transcript import read_transcript
from memory.types import Turn


def backend(embedder, **options):
    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/test", backoff=0.01)), embedder=embedder,
                     options=options)
    return AMemBackend(env)


def note(keywords, context, tags):
    return json.dumps({"keywords": keywords, "context": context, "tags": tags})


def evolve(should=True, actions=("strengthen",), connections=(), tags=(), contexts=(),
           neighbor_tags=()):
    return json.dumps({"should_evolve": should, "actions": list(actions),
                       "suggested_connections": list(connections), "tags_to_update": list(tags),
                       "new_context_neighborhood": list(contexts),
                       "new_tags_neighborhood": [list(t) for t in neighbor_tags]})


DATES = Turn(0, "parse_date in utils/dates.py must return UTC datetimes.", "Done.")
TZ = Turn(1, "Also format_date should print the UTC offset.", "Added the offset.")
DB = Turn(2, "The db pool size is 20 connections.", "Noted.")


async def test_note_construction_writes_the_attributes_and_embeds_them(embedder, script):
    amem = backend(embedder)
    script.push(note(["parse_date", "utils/dates.py", "UTC"],
                     "The developer requires UTC datetimes from parse_date.",
                     ["dates", "requirement"]))
    await amem.observe(DATES)
    n = amem.notes["n0"]
    assert n.keywords == ["parse_date", "utils/dates.py", "UTC"]
    assert n.context.startswith("The developer requires UTC")
    assert n.tags == ["dates", "requirement"] and n.links == []
    assert "Developer: parse_date in utils/dates.py" in n.content
    expected = embedder.embed([n.embedding_text()])[0]
    assert np.allclose(amem._vectors["n0"], expected, atol=1e-5)
    assert "requirement" in n.embedding_text() and "parse_date" in n.embedding_text()
    assert len(script.calls) == 1  # first note: no neighbours, no evolution call
    assert [r["op"] for r in amem.drain_records()] == ["ADD"]


async def test_link_generation_and_neighbour_evolution(embedder, script):
    amem = backend(embedder)
    script.push(note(["parse_date"], "UTC dates.", ["dates"]),
                note(["format_date", "UTC"], "Offsets in formatted dates.", ["dates"]),
                evolve(actions=["strengthen", "update_neighbor"], connections=[0, 7],
                       tags=["dates", "timezone"],
                       contexts=["Dates are UTC in parse_date and format_date."],
                       neighbor_tags=[["dates", "timezone"]]))
    await amem.observe(DATES)
    old_vector = amem._vectors["n0"].copy()
    before = amem.state_digest()
    await amem.observe(TZ)
    prompt = script.calls[-1][-1]["content"]
    assert "[0] Developer: parse_date" in prompt
    assert "New note:\nDeveloper: Also format_date" in prompt
    n0, n1 = amem.notes["n0"], amem.notes["n1"]
    assert n1.links == ["n0"]  # the invented neighbour 7 is ignored
    assert n1.tags == ["dates", "timezone"]
    assert n0.context == "Dates are UTC in parse_date and format_date."
    assert n0.tags == ["dates", "timezone"]
    assert not np.allclose(amem._vectors["n0"], old_vector)  # re-embedded after evolving
    assert amem.state_digest() != before
    ops = [r["op"] for r in amem.drain_records()]
    assert ops == ["ADD", "ADD", "LINK", "EVOLVE"]


async def test_no_evolution_when_the_model_says_so(embedder, script):
    amem = backend(embedder)
    script.push(note(["a"], "dates c0", ["t"]), note(["b"], "db c1", ["t"]),
                evolve(should=False, actions=["strengthen"], connections=[0],
                       contexts=["changed"], neighbor_tags=[["x"]]))
    await amem.observe(DATES)
    await amem.observe(DB)
    assert amem.notes["n2"].links == [] and amem.notes["n0"].context == "dates c0"


async def test_retrieval_brings_linked_notes_along(embedder, script):
    amem = backend(embedder, amem_top_k=1)
    script.push(note(["pool"], "Database pool size.", ["db"]),
                note(["parse_date"], "UTC dates.", ["dates"]),
                evolve(connections=[0], contexts=[""], neighbor_tags=[[]]))
    await amem.observe(Turn(0, DB.user, DB.assistant))
    await amem.observe(Turn(1, DATES.user, DATES.assistant))  # linked: the model's choice
    assert amem.notes["n1"].links == ["n0"]
    before = amem.state_digest()
    pack = await amem.context("Which timezone does parse_date return?", budget=10_000)
    memory = pack.of_kind("memory")
    assert [s.source for s in memory] == ["n1", "n0"]  # top-1, then the note it links to
    assert "(linked)" in memory[1].text and "(linked)" not in memory[0].text
    assert "keywords: parse_date" in memory[0].text
    assert amem.state_digest() == before
    amem.notes["n1"].links = []
    pack = await amem.context("Which timezone does parse_date return?", budget=10_000)
    assert [s.source for s in pack.of_kind("memory")] == ["n1"]


async def test_a_failed_analysis_keeps_the_note(embedder, script):
    amem = backend(embedder)
    script.push("not json", "still not json")  # the call and its corrective retry
    await amem.observe(DATES)
    assert amem.notes["n0"].context == "General" and amem.notes["n0"].keywords == []
    ops = [r["op"] for r in amem.drain_records()]
    assert ops == ["skipped", "ADD"]


@pytest.mark.slow
async def test_real_embedded_model_builds_and_links_notes(make_agent):
    agent = make_agent("amem", model="local/smollm2", max_answer_tokens=24)
    for query in ["parse_date in app/dates.py must return UTC datetimes.",
                  "format_date in app/dates.py must print the UTC offset.",
                  "Which timezone do the date helpers use?"]:
        assert (await agent.ask(query)).ok
    records = read_transcript(agent.transcript.path).of_type("memory")
    print("memory ops:", [(r["op"], r["text"][:60]) for r in records])
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    assert sum(r["op"] in ("ADD", "LINK", "EVOLVE") for r in records) >= 3
    assert all(n.keywords for n in agent.backend.notes.values())
    pack = await agent.context("dates")
    assert pack.of_kind("memory")


def test_constrained_schemas_limit_choices_and_compile_to_a_grammar():
    import json as _json

    from llama_cpp import LlamaGrammar

    from memory.backends.amem import Note, evolve_schema, note_schema
    from memory.llm._schema import SchemaError, validate

    new = Note("n2", "c", "t", 2, ["parse_date"], ["dates"], "UTC dates.")
    neighbors = [Note("n0", "a", "t", 0, [], ["db"], "Pool size."),
                 Note("n1", "b", "t", 1, [], ["dates"], "Offsets.")]
    schema = evolve_schema(new, neighbors, constrained=True)
    good = {"should_evolve": True, "actions": ["strengthen"], "suggested_connections": [1],
            "tags_to_update": ["dates", "bug"],
            "new_context_neighborhood": ["Pool size.", "UTC dates."],
            "new_tags_neighborhood": [["db"], ["dates", "requirement"]]}
    validate(good, schema)
    for bad in ({"suggested_connections": [2]},  # not a shown neighbour
                {"new_context_neighborhood": ["Offsets.", "Offsets."]},  # n1's context for n0
                {"new_context_neighborhood": ["Pool size.", "invented text"]}):
        with pytest.raises(SchemaError):
            validate({**good, **bad}, schema)
    notes = note_schema(["parse_date", "UTC"], ["parse_date must return UTC."])
    validate({"keywords": ["UTC"], "context": "parse_date must return UTC.",
              "tags": ["bug"]}, notes)
    with pytest.raises(SchemaError):
        validate({"keywords": ["invented"], "context": "parse_date must return UTC.",
                  "tags": []}, notes)
    for compiled in (schema, notes):
        assert LlamaGrammar.from_json_schema(_json.dumps(compiled), verbose=False)
