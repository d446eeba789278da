"""Conversation volume and the bounded window: the context-reading scripted model answers
at an assistant's length, and ``--window`` bounds every budget of a replay."""

from __future__ import annotations

import json

import pytest

from memory.llm.client import FALLBACK_WINDOW
from replay.cli.command import build_parser
from replay.core.runner import ReplayConfig, ReplayError
from replay.core.window import UNBOUNDED, answer_llm, window_tokens
from replay.locoeval import DEMO
from replay.locoeval.outline import load_outlines
from replay.reporting.report import summarize
from tests.replay.answers import NOTHING, answer, shown_code
from tests.replay.core.test_runner import run_with_reader

LONG = "inventory-13-k1-sh"  # 69 queries: the demo's longest outline
BOUNDED = 32768  # a window full must outgrow (the bench's bounded condition)

SYSTEM = """You are engram, a coding assistant.

## Code from the repository

# inventory/money.py::format_price
```python
def format_price(cents, currency="EUR"):
    \"\"\"Render an amount of cents for people. Never rounds.\"\"\"
    if cents < 0:
        raise ValueError("negative")
    return f"{quantize_cents(cents) / 100:.2f} {currency}"
```

# inventory/reports.py::stock_report
```python
def stock_report(stock):
    return sorted(stock.levels.items())
```"""


def test_the_window_setting_bounds_the_pair_llm():
    assert answer_llm("scripted/w", None).context_window() == FALLBACK_WINDOW  # the model's
    assert answer_llm("scripted/w", 5000).context_window() == 5000
    assert answer_llm("scripted/w", 0).context_window() == UNBOUNDED
    assert window_tokens(None) is None and window_tokens(0) == UNBOUNDED
    with pytest.raises(ValueError):
        window_tokens(-1)
    with pytest.raises(ReplayError):
        ReplayConfig(backends=["full"], model="scripted/w", out="x", window=-5)


def test_the_cli_takes_a_window(capsys):
    assert build_parser().parse_args(["x.json"]).window is None
    assert build_parser().parse_args(["x.json", "--window", "32768"]).window == 32768
    assert build_parser().parse_args(["x.json", "--window", "0"]).window == 0
    for bad in ("-1", "big"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["x.json", "--window", bad])
    assert "--window" in capsys.readouterr().err


def test_an_answer_is_the_code_shown_explained_named_block_first():
    question = "Next: `Stock.remove` should reuse `stock_report` from `inventory/reports.py`."
    text = answer(SYSTEM, question)
    assert text == answer(SYSTEM, question)  # deterministic
    blocks = shown_code(SYSTEM)
    assert [b.where for b in blocks] == ["inventory/money.py::format_price",
                                         "inventory/reports.py::stock_report"]
    assert text.index("def stock_report") < text.index("def format_price")  # named first
    for block in blocks:
        assert block.code in text  # quoted whole, from the prompt
    assert "raises `ValueError`" in text and "calls `quantize_cents`." in text
    assert "Render an amount of cents for people." in text
    # it never says what the developer said: that reaches a context only as the developer's
    assert "Stock.remove" not in text and "should reuse" not in text


def test_an_answer_fits_its_cap_and_needs_code_to_quote():
    assert answer("You are engram.\n\nNo code here.", "Also, `f` takes (a).") == NOTHING
    short = answer(SYSTEM, "What does `format_price` do?", words=110)
    assert "def format_price" in short and "def stock_report" not in short
    assert len(short.split()) <= 110
    assert answer(SYSTEM, "anything", words=5) == NOTHING  # no block fits


@pytest.fixture(scope="module")
def long_runs(tmp_path_factory):
    """The demo's longest outline with ``full``: unbounded, and in a 32K window."""
    outline = [o for o in load_outlines(DEMO / "outlines") if o.id == LONG]
    out = tmp_path_factory.mktemp("window")
    unbounded, _ = run_with_reader(outline, ["full"], out / "unbounded")
    bounded, _ = run_with_reader(outline, ["full"], out / "bounded", window=BOUNDED)
    return unbounded, bounded, out


def test_full_grows_to_the_papers_volume_unbounded(long_runs):
    """69 turns of an assistant's answers: full's history holds every turn, and its prompt
    tokens per conversation are of LoCoEval's order (Full: 3.2-4.4 M per sample)."""
    [pair], _, out = long_runs
    assert pair["error"] is None and pair["window"] == UNBOUNDED
    assert pair["scores"]["recall"][next(iter(pair["scores"]["recall"]))] == 1.0
    prompt = sum(int(c.get("prompt_tokens") or 0) for c in pair["usage"].values())
    assert prompt > 1_000_000  # words, the scripted model's count (about 1.7 tokens each)
    turns = [json.loads(line) for line in
             (out / "unbounded" / "conversations" / f"{LONG}__full.jsonl").read_text().splitlines()]
    answers = [t["assistant"] for t in turns if t.get("type") == "turn" and t.get("assistant")]
    assert len(answers) >= 69
    sizes = sorted(len(a.split()) for a in answers[:69])
    assert 300 <= sizes[len(sizes) // 2] <= 1500  # hundreds of words, up to the cap
    outline = load_outlines(DEMO / "outlines")
    items = [i.text for o in outline if o.id == LONG for s in o.samples for i in s.items]
    assert not any(item in text for item in items for text in answers)  # no peeking


def test_full_drops_turns_and_items_in_a_bounded_window(long_runs):
    """A 32K window: full keeps only the newest turns that fit, and loses true items."""
    [unbounded], [bounded], out = long_runs
    assert bounded["error"] is None and bounded["window"] == BOUNDED
    assert summarize([bounded])["backends"]["full"]["recall"] < 1.0
    assert summarize([unbounded])["backends"]["full"]["recall"] == 1.0
    records = [json.loads(line) for line in
               (out / "bounded" / "conversations" / f"{LONG}__full.jsonl").read_text().splitlines()]
    last = [r for r in records if r.get("type") == "turn"][68]  # the conversation's last turn
    kept = {s["source"] for s in last["context"] if s["kind"] == "history"}
    assert 0 < len(kept) < 68  # whole turns dropped, the newest kept
    assert f"turn:{67}" in kept and "turn:0" not in kept
    used = lambda p: sum(int(c.get("prompt_tokens") or 0) for c in p["usage"].values())  # noqa: E731
    assert used(bounded) < used(unbounded)


def test_the_report_puts_fulls_volume_next_to_the_papers(long_runs):
    from rich.console import Console

    from replay.locoeval.report import volume
    from replay.reporting.report import table

    [unbounded], [bounded], _ = long_runs
    said = volume(summarize([bounded]))
    assert said is not None and "3.2-4.4 M per sample" in said and "window: 32,768" in said
    assert "window: unbounded" in volume(summarize([unbounded]))
    tokens = sum(int(c.get("prompt_tokens") or 0) for c in bounded["usage"].values())
    assert f"full: {tokens / 1e6:.2f} M prompt tokens per conversation" in said
    console = Console(width=250, record=True)
    console.print(table(summarize([bounded])))
    assert said in console.export_text()
    assert volume(summarize([{**bounded, "backend": "rag"}])) is None  # no full row
