"""The LLM mock user and the LLM judge, with the scripted model."""

from __future__ import annotations

from typing import Any

import pytest

from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from memory.transcript import read_transcript
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.locoeval.judge import EmbedJudge, LLMJudge
from replay.locoeval.llmuser import LLMUser
from replay.locoeval.outline import load_outline
from tests.replay.conftest import perfect_reply


def user_reply(messages: list[dict[str, Any]]) -> str:
    if messages[0]["content"].startswith("You play a developer"):
        prompt = messages[-1]["content"]
        items = [line[2:] for line in prompt.split("Information items to convey:\n")[-1]
                 .split("\n\n")[0].splitlines() if line.startswith("- ")] \
            if "Information items" in prompt else []
        return "DEV: " + " ".join(items or ["just chatting"])
    return perfect_reply(messages)


def test_the_prompt_follows_locoeval(outline_file, script, embedder, tmp_path, shop_repo):
    outline = load_outline(outline_file)
    index = RepoIndex(shop_repo, Store(tmp_path / "ix"), embedder)
    index.refresh()
    user = LLMUser(outline, LLM(LLMConfig(model="scripted/u")), index)
    prompt = user.prompt(3, "Cart.total sums the lines.")[1]["content"]
    # window of the queries so far: summaries of the earlier ones
    assert "- We need a price-with-tax helper." in prompt
    # the previous answer comes right before the last query
    assert prompt.index("Cart.total sums the lines.") < prompt.index("Your next message")
    # the last query: its type, its items, and the code retrieved for its location key
    assert "Kind: function_location." in prompt
    assert "- Cart.total is a method in shop/cart.py." in prompt
    assert "# shop/cart.py::Cart.total" in prompt and "def total(self):" in prompt
    # recap queries are skipped unless second to last
    queries = outline.queries()
    assert queries[6].recap
    assert [q.id for q in user.window(6)][-1] == "q7"
    assert all(not q.recap for q in user.window(5))


async def test_a_failing_user_model_falls_back_to_the_template(outline_file, script):
    outline = load_outline(outline_file)
    user = LLMUser(outline, LLM(LLMConfig(model="scripted/u", retries=0)))
    script.push("   ")
    text = await user.message(0, "")
    assert user.fallbacks == 1 and "with_tax lives in shop/prices.py." in text


async def test_outline_replay_with_the_llm_user_and_judge(tmp_path, outline_file, script,
                                                          embedder):
    script.default = user_reply
    config = ReplayConfig(backends=["rag"], model="scripted/t", out=tmp_path / "run",
                          benchmark_options={"locoeval": {"mock_user": "llm"}},
                          judge_model="scripted/judge", max_tokens=64)
    replay = Replay(config, embedder=embedder)
    try:
        pairs = await replay.run(load_source(outline_file))
    finally:
        replay.close()
    row = pairs[0]
    assert row["error"] is None and row["user_tokens"] > 0 and row["judge_tokens"] > 0
    assert row["user_fallbacks"] == 0
    turns = read_transcript(tmp_path / "run" / "conversations" / "shop-2__rag.jsonl")
    users = [t["user"] for t in turns.of_type("turn")]
    assert users[1] == "DEV: The tax rate is ten percent."
    assert row["judge_fallbacks"] == 3  # "perfect_reply" is no judge: every verdict malformed
    assert row["scores"]["extract_f1"]["s1"] == 1.0  # the embedding judge stood in


async def test_llm_judge_counts_one_to_one_matches(script, embedder):
    # LoCoEval's F1 is any-match (replay.core.metrics.set_f1); the verdict is a list of id pairs
    judge = LLMJudge(LLM(LLMConfig(model="scripted/j")), EmbedJudge(embedder))
    # an invented number fails the schema: the judge is asked once more, with the error
    script.push('{"matches": [{"prediction": 7, "reference": 0}]}',
                '{"matches": [{"prediction": 0, "reference": 1}, {"prediction": 1, '
                '"reference": 1}, {"prediction": 1, "reference": 0}]}')
    scores = await judge.score_async(["a", "b", "c"], ["x", "y"])
    assert scores.precision == pytest.approx(2 / 3) and scores.recall == 1.0
    assert judge.fallbacks == 0 and judge.llm.stats.retries == 1
    script.push("no idea")
    await judge.score_async(["a"], ["b"])
    assert judge.fallbacks == 1


@pytest.mark.slow
async def test_llm_judge_on_the_embedded_model_gives_parsed_verdicts(embedder):
    """SmolLM2 under the verdict grammar: a 5-item case parses, no fallback."""
    judge = LLMJudge(LLM(LLMConfig(model="local/smollm2")), EmbedJudge(embedder))
    truth = ["normalize_sku lower-cases the SKU.", "order_total raises ValueError on an "
             "empty order.", "Stock.add takes (sku, count).", "Prices are Decimal.",
             "The module logs with logging, never print."]
    predicted = ["order_total raises ValueError when the order is empty.",
                 "normalize_sku lower-cases its input.", "Stock.add takes (sku, count).",
                 "The web UI is written in React.", "Prices use Decimal."]
    scores = await judge.score_async(predicted, truth)
    assert judge.stats() == {"calls": 1, "parse_failures": 0, "errors": 0, "fallbacks": 0}
    assert judge.llm.stats.parsed == judge.llm.stats.grammar == 1
    assert 0.0 <= scores.f1 <= 1.0
