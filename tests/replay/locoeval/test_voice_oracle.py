"""``oracle`` in every voice: the reader-free metrics and the context-reading scripted
reader compare with what was said, so the ground truth keeps recall 1.0, stale 0 and its
pass@1 whatever the wording (the demo's outlines, answered by the scripted reader)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memory.index.embed import get_embedder
from replay.core.runner import Replay, ReplayConfig
from replay.locoeval import DEMO
from replay.locoeval.outline import load_outlines
from replay.locoeval.voice import check_voice, voiced
from replay.reporting.report import summarize
from tests.conftest import SCRIPT, _register_scripted
from tests.replay.conftest import one_per_cell
from tests.replay.reader import ContextReader

BY_HAND = Path(__file__).parents[1] / "fixtures" / "voice" / "demo-by-hand.json"
WRITER_B = DEMO / "phrasings" / "writer-b.json"  # every item, by a writer other than the builder
VOICES = [("template", 0), ("varied", 0), ("varied", 1), (str(BY_HAND), 0), (str(WRITER_B), 0)]
# the template and the varied voices (made up the same way for every item) run one outline of
# each (k, subset) cell of the demo (tests/replay/conftest.py): every kind of item and revision
# said in the voice, at 40 % of the demo's turns; writer-b's file, written item by item, runs all.
# The file by hand words items of two outlines: the others it says as template, as the
# template run does (the same text, the same replay), so its run keeps one of them only
BY_HAND_OUTLINES = {"inventory-01-k1-mh", "inventory-02-k2-sh", "inventory-03-k3-mh"}


def oracle_run(spec: str, seed: int, out: Path) -> list[dict]:
    outlines = load_outlines(DEMO / "outlines")
    if spec == str(BY_HAND):
        outlines = [o for o in outlines if o.id in BY_HAND_OUTLINES]
    elif spec != str(WRITER_B):  # the file words every item: all of them
        outlines = one_per_cell(outlines)
    voice = check_voice(spec, outlines, seed)
    reader = ContextReader([voiced(o, voice) for o in outlines], DEMO / "inventory",
                           answer_words=0)
    _register_scripted()
    SCRIPT.queue.clear()
    SCRIPT.default, SCRIPT.piece_words = reader, 64  # answers streamed in a few pieces
    replay = Replay(ReplayConfig(backends=["oracle"], model="scripted/reader", out=out,
                                 repo=DEMO / "inventory", max_tokens=64, window=32768,
                                 seed=seed, benchmark_options={"locoeval": {"voice": spec}}),
                    embedder=get_embedder())
    try:
        return asyncio.run(replay.run(outlines))
    finally:
        replay.close()
        SCRIPT.default, SCRIPT.piece_words = "scripted answer", 1


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {(spec, seed): oracle_run(spec, seed, tmp_path_factory.mktemp("voice"))
            for spec, seed in VOICES}


def test_oracle_keeps_recall_stale_and_pass_in_every_voice(runs):
    template = summarize(runs[("template", 0)])["backends"]["oracle"]
    assert template["pass@1"] == 1.0
    for key, pairs in runs.items():
        assert all(p["error"] is None for p in pairs), key
        row = summarize(pairs)["backends"]["oracle"]
        assert row["recall"] == 1.0 and row["stale"] == 0.0, (key, row)
        assert row["pass@1"] == template["pass@1"], key
        for pair in pairs:  # the exact-text metrics too: the items as said are in its context
            scores = pair["scores"]
            assert set(scores["recall_exact"].values()) == {1.0}, key
            assert set(scores["stale_exact"].values()) == {0.0}, key


def test_results_record_the_voice(runs):
    for (spec, seed), pairs in runs.items():
        for pair in pairs:
            voice = pair["voice"]
            if spec == "varied":
                assert voice == {"kind": "varied", "seed": seed}
            elif spec == "template":
                assert voice == {"kind": "template"}
            else:
                writer = "the voice" if spec == str(BY_HAND) else "writer-b"
                assert voice["kind"] == "file" and voice["writer"].startswith(writer)
                assert len(voice["sha256"]) == 64 and voice["items"] > 0
    covered = {p["source"]: p["voice"]["covered"] for p in runs[(str(BY_HAND), 0)]}
    assert covered == {"inventory-01-k1-mh": 18, "inventory-02-k2-sh": 4,
                       "inventory-03-k3-mh": 0}  # the other outline: said as template
    (voices,) = summarize(runs[(str(BY_HAND), 0)])["voices"]
    items = sum(len(o.items) for o in load_outlines(DEMO / "outlines") if o.id in covered)
    assert voices["covered"] == 22 and voices["items"] == items > 22  # summed over outlines
    assert summarize(runs[("varied", 1)])["voices"] == [{"kind": "varied", "seed": 1}]
