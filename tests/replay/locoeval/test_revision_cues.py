"""Revision cues, a condition of their own (``--revision-cues RATE``): at rate 0 nothing
says which version holds but the order; at a rate r, items that replace an earlier
version are voiced with a natural cue, and nothing else changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.llm.client import LLM, LLMConfig
from replay.cli.command import _config, build_parser
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.locoeval import DEMO
from replay.locoeval.llmuser import LLMUser
from replay.locoeval.mockuser import CUES, TemplateUser
from replay.locoeval.options import LocoevalOptions
from replay.locoeval.outline import load_outlines
from tests.replay.locoeval.test_llm_roles import user_reply

OUTLINES = load_outlines(DEMO / "outlines")


def _replacing(outline) -> set[str]:
    """Items asked after an earlier version of their unit (computed here, not by the user)."""
    seen: set[str] = set()
    out: set[str] = set()
    for query in outline.queries():
        for item_id in query.contains:
            unit = outline.items[item_id].unit
            if unit in seen:
                out.add(item_id)
            seen.add(unit)
    return out


def _cued_line(line: str, plain: str) -> bool:
    lead, text = line[:2], line[2:]
    low = plain[0].lower() + plain[1:] if plain.split(" ", 1)[0].istitle() else plain
    return lead in ("- ", "* ") and text != plain and any(
        text == c.format(text=plain, low=low) for c in CUES)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_only_the_cued_queries_change_and_only_in_their_cued_items(seed):
    cued_items = 0
    for outline in OUTLINES:
        plain = TemplateUser(outline, seed).conversation()
        cued = TemplateUser(outline, seed, 0.5).conversation()
        replacing = _replacing(outline)
        assert replacing  # every bundled outline has distractors
        for (query, a), (_, b) in zip(plain, cued, strict=True):
            if a == b:
                continue
            a_lines, b_lines = a.split("\n"), b.split("\n")
            assert len(a_lines) == len(b_lines) and a_lines[0] == b_lines[0]  # same opener
            for n, (x, y) in enumerate(zip(a_lines, b_lines, strict=True)):
                if x == y:
                    continue
                item_id = query.contains[n - 1]  # line n voices item n - 1
                assert item_id in replacing  # never a first version, never noise
                assert _cued_line(y, outline.items[item_id].text), y
                cued_items += 1
    assert cued_items > 20


def test_rate_one_cues_every_replacing_item_and_rate_zero_none():
    outline = OUTLINES[0]
    for rate, expected in ((0.0, set()), (1.0, _replacing(outline))):
        user = TemplateUser(outline, 3, rate)
        assert {i for i in outline.items if user.cue(i)} == expected
    assert len({TemplateUser(outline, 3, 1.0).cue(i) for i in _replacing(outline)}) > 2  # varied
    with pytest.raises(ValueError, match="rate"):
        TemplateUser(outline, 0, 1.5)


async def test_the_llm_user_is_told_which_items_replace_an_earlier_version(script):
    outline = OUTLINES[0]
    llm = LLM(LLMConfig(model="scripted/t"))
    cued = LLMUser(outline, llm, seed=2, revision_cues=1.0)
    plain = LLMUser(outline, llm, seed=2)
    marked = 0
    for t, query in enumerate(outline.queries()):
        with_cues = cued.prompt(t, "")[1]["content"]
        without = plain.prompt(t, "")[1]["content"]
        assert "replaces what you said earlier" not in without
        replacing = [i for i in query.contains if i in _replacing(outline)]
        assert with_cues.count("replaces what you said earlier") == len(replacing)
        marked += len(replacing)
        assert (with_cues == without) == (not replacing)
    assert marked
    assert "do not say\nor hint that it changes" in plain.prompt(0, "")[0]["content"]


def test_the_cli_takes_the_rate_and_refuses_a_bad_one(tmp_path, capsys):
    def config(*argv: str) -> Any:
        made = _config(build_parser().parse_args([str(tmp_path / "o.json"), *argv]))
        return LocoevalOptions.of(made)  # LoCoEval's own options, carried as values

    assert config().revision_cues == 0.0  # LoCoEval's condition by default
    assert config("--revision-cues", "0.5").revision_cues == 0.5
    for bad in ("1.5", "-0.1", "half"):
        with pytest.raises(SystemExit):
            config("--revision-cues", bad)
    assert "--revision-cues" in capsys.readouterr().err


async def test_results_record_the_rate(tmp_path: Path, outline_file: Path, script: Any,
                                       embedder: Any) -> None:
    script.default = user_reply
    replay = Replay(ReplayConfig(backends=["empty"], model="scripted/t", out=tmp_path / "run",
                                 max_tokens=64,
                                 benchmark_options={"locoeval": {"revision_cues": 0.5}}),
                    embedder=embedder)
    try:
        row = (await replay.run(load_source(outline_file)))[0]
    finally:
        replay.close()
    assert row["error"] is None and row["revision_cues"] == 0.5
