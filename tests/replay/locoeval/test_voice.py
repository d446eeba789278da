"""The voice of the template mock user, a condition of the bench (``--voice``): the
builder's wording, a varied one drawn by the seed, or another writer's phrasing file."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import replace

import pytest

from replay.cli.command import _config, build_parser
from replay.locoeval import DEMO
from replay.locoeval._contradict import REVISION_WORDS
from replay.locoeval.mockuser import TemplateUser
from replay.locoeval.options import LocoevalOptions
from replay.locoeval.outline import Item, load_outlines
from replay.locoeval.voice import (
    GENERIC,
    SHAPES,
    VoiceError,
    check_voice,
    voice_of,
    voiced,
)

OUTLINES = load_outlines(DEMO / "outlines")
NAME = re.compile(r"`([^`]+)`")


def said(seed: int, outlines=OUTLINES) -> list[list[str]]:
    voice = voice_of("varied", seed)
    return [[text for _, text in TemplateUser(voiced(o, voice), seed).conversation()]
            for o in outlines]


def test_template_is_the_builders_wording_byte_for_byte():
    voice = voice_of("template", 3)
    for outline in OUTLINES:
        assert voiced(outline, voice) is outline
        assert TemplateUser(voiced(outline, voice), 3).conversation() == \
            TemplateUser(outline, 3).conversation()


def test_varied_is_byte_identical_for_a_seed_and_independent_of_run_order():
    first = said(0)
    assert said(0) == first
    assert said(0, OUTLINES[::-1])[::-1] == first  # voiced per item, not per run
    other = said(1)
    assert other != first
    changed = sum(a != b for x, y in zip(first, other, strict=True)
                  for a, b in zip(x, y, strict=True))
    assert changed > len(OUTLINES) * 10  # most queries with items read otherwise
    # the voice changes only the items' lines: openers, summaries and locations stay
    plain = [[t for _, t in TemplateUser(o, 0).conversation()] for o in OUTLINES]
    for x, y in zip(plain, first, strict=True):
        for a, b in zip(x, y, strict=True):
            assert a.split("\n")[0] == b.split("\n")[0]
            assert a.count("\n") == b.count("\n")


def _items(seed: int):
    voice = voice_of("varied", seed)
    for outline in OUTLINES:
        for item in outline.items.values():
            yield item, voice.said(outline, item)


def test_every_item_type_takes_at_least_six_shapes_over_a_run():
    shapes: dict[str, set[str]] = defaultdict(set)
    quoting: Counter[str] = Counter()
    for item, voiced_item in _items(0):
        shapes[item.type].add(voiced_item.shape)
        text = voiced_item.text
        quoting["`" if "`" in text else "'" if "'" in text.replace("I'd", "") else
                '"' if '"' in text else "bare"] += 1
    assert set(shapes) == set(SHAPES)  # every type the builder writes is in the demo
    for kind, found in shapes.items():
        assert len(found) >= 6, (kind, found)
    assert min(quoting.values()) > 50, quoting  # backticks, single, double quotes, bare
    # the other types (hand-written outlines) and texts no frame fits: a generic shape
    outline = OUTLINES[0]
    voice = voice_of("varied", 0)
    for kind in ("repo_knowledge", "coding_convention", "other", "parameter_list"):
        found = {voice.said(replace(outline, id=f"o{n}"), Item(
            "x", kind, "Keep `money.py` free of I/O, as `Cart` is.")).shape for n in range(60)}
        assert len(found) >= 6 and all(s.startswith("generic:") for s in found), found


@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_claim_and_names_and_no_revision_cue(seed):
    count = 0
    for item, voiced_item in _items(seed):
        text = voiced_item.text
        for name in NAME.findall(item.text):  # every code name of the builder's text
            assert re.search(rf"(?<![\w/]){re.escape(name)}(?![\w/])", text), (name, text)
        # no name added: what is quoted in the voiced text was quoted in the built one
        quoted = set(re.findall(r"`([^`]+)`", text)) | set(
            re.findall(r"(?<![\w])\"([^\"]+)\"(?![\w])", text))
        assert quoted <= set(NAME.findall(item.text)) | set(
            re.findall(r"\"([^\"]+)\"", item.text)), (quoted, item.text)
        bare = NAME.sub("", text)
        assert not REVISION_WORDS.search(bare) or REVISION_WORDS.search(NAME.sub("", item.text))
        count += 1
    assert count > 350
    for shape in [*(s for group in SHAPES.values() for s in group), *GENERIC]:
        assert not REVISION_WORDS.search(shape), shape


def test_the_voice_and_the_cues_stay_apart():
    voice = voice_of("varied", 2)
    for outline in OUTLINES[:4]:
        spoken = voiced(outline, voice)
        plain, cued = TemplateUser(spoken, 2).conversation(), \
            TemplateUser(spoken, 2, 1.0).conversation()
        assert plain != cued  # the cues still come from their own condition
        assert not any(REVISION_WORDS.search(NAME.sub("", t)) and not REVISION_WORDS.search(
            NAME.sub("", o)) for (_, t), (_, o) in zip(
                plain, TemplateUser(outline, 2).conversation(), strict=True))


# -- phrasing files ------------------------------------------------------------------------
def _write(tmp_path, data, name="phrasings.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def test_a_phrasing_file_voices_what_it_covers_and_the_rest_as_template(tmp_path):
    outline = OUTLINES[0]
    ids = list(outline.items)
    said_by = {ids[0]: "honestly, put order_total wherever orders live: inventory/orders.py",
               ids[1]: "order_total - lines, prices"}
    path = _write(tmp_path, {"writer": "a colleague", "note": "by hand",
                             "items": {outline.id: said_by}})
    voice = check_voice(str(path), OUTLINES)
    spoken = voiced(outline, voice)
    for item_id, item in spoken.items.items():
        assert item.text == said_by.get(item_id, outline.items[item_id].text)
        assert item.built == outline.items[item_id].text
    record = voice.record(outline)
    assert record["writer"] == "a colleague" and record["covered"] == 2
    assert record["items"] == len(ids) and len(record["sha256"]) == 64
    assert voiced(OUTLINES[1], voice).items == OUTLINES[1].items  # not covered: template


@pytest.mark.parametrize(("data", "message"), [
    ("{not json", "cannot read"),
    ('["a list"]', "JSON object"),
    ({"note": "", "items": {}}, "writer"),
    ({"writer": "w", "items": []}, "items"),
    ({"writer": "w", "items": {"x": {"1": 3}}}, "non-empty texts"),
])
def test_a_corrupt_phrasing_file_is_a_clear_error(tmp_path, data, message):
    with pytest.raises(VoiceError, match=message):
        voice_of(str(_write(tmp_path, data)))


def test_a_phrasing_file_naming_an_unknown_outline_or_item_is_a_clear_error(tmp_path):
    outline = OUTLINES[0]
    path = _write(tmp_path, {"writer": "w", "items": {"no-such-outline": {"a": "b"}}})
    with pytest.raises(VoiceError, match="unknown outline 'no-such-outline'"):
        check_voice(str(path), OUTLINES)
    path = _write(tmp_path, {"writer": "w", "items": {outline.id: {"zz-9": "text"}}})
    with pytest.raises(VoiceError, match=f"outline '{outline.id}' has no item.*zz-9"):
        check_voice(str(path), OUTLINES)
    with pytest.raises(VoiceError, match="zz-9"):
        voiced(outline, voice_of(str(path)))
    with pytest.raises(VoiceError, match="neither template nor varied"):
        voice_of(str(tmp_path / "missing.json"))


def test_the_option_reaches_the_config():
    args = build_parser().parse_args([str(DEMO / "outlines"), "--voice", "varied",
                                      "--seed", "4"])
    config = _config(args)  # LoCoEval's option, carried as a value in its options
    assert (LocoevalOptions.of(config).voice, config.seed) == ("varied", 4)
    plain = _config(build_parser().parse_args([str(DEMO / "outlines")]))
    assert LocoevalOptions.of(plain).voice == "template"


def test_a_bad_phrasing_file_stops_the_cli_before_the_run(tmp_path, script, capsys):
    from replay.cli.command import main

    bad = _write(tmp_path, {"writer": "w", "items": {"inventory-99": {"s1-0": "x"}}})
    out = tmp_path / "run"
    code = main(["demo", "--model", "scripted/t", "--mock-user", "template", "--voice",
                 str(bad), "--out", str(out)])
    assert code == 2 and "unknown outline 'inventory-99'" in capsys.readouterr().err
    assert not out.exists()


def test_the_llm_user_records_the_voice_without_applying_it():
    from types import SimpleNamespace

    from replay.core.runner import ReplayConfig
    from replay.locoeval.benchmark import said

    config = ReplayConfig(backends=[], model="scripted/t", out="unused", seed=2,
                          benchmark_options={"locoeval": {"mock_user": "llm",
                                                          "voice": "varied"}})
    replay = SimpleNamespace(config=config, shared={})
    result: dict = {}
    assert said(replay, OUTLINES[0], result) is OUTLINES[0]  # the builder's text
    assert result["voice"]["kind"] == "varied" and result["voice"]["applied"] is False
    config.benchmark_options["locoeval"]["mock_user"] = "template"
    spoken = said(replay, OUTLINES[0], result)
    assert result["voice"] == {"kind": "varied", "seed": 2}
    assert spoken.items != OUTLINES[0].items and \
        [i.built for i in spoken.items.values()] == [i.text for i in OUTLINES[0].items.values()]
