"""Which mock user runs, and LoCoEval's reference-query step (scripted model, seeded)."""

from __future__ import annotations

import json
import random
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.llm.client import LLM, LLMConfig
from replay.cli.command import _config, build_parser
from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.locoeval.llmuser import (
    SKIPPED,
    TOP_REFERENCES,
    LLMUser,
    ReferenceQueries,
    load_reference_queries,
)
from replay.locoeval.mockuser import choose_user
from replay.locoeval.options import LocoevalOptions
from replay.locoeval.outline import load_outline
from tests.replay.locoeval.test_llm_roles import user_reply

# -- default selection -------------------------------------------------------------------


@pytest.mark.parametrize(("requested", "model", "user_model", "expected"), [
    (None, "local/smollm2", None, ("template", None, "template (offline default)")),
    (None, "openai/gpt-4o", None, ("llm", "openai/gpt-4o",
                                   "llm (default with a non-embedded model)")),
    (None, "openai/gpt-4o", "anthropic/claude", ("llm", "anthropic/claude",
                                                 "llm (default with a non-embedded model)")),
    (None, "local/smollm2", "ollama/qwen", ("llm", "ollama/qwen",
                                            "llm (default with a non-embedded model)")),
    ("template", "openai/gpt-4o", None, ("template", None, "template (chosen)")),
    ("llm", "local/smollm2", None, ("llm", "local/smollm2", "llm (chosen)")),
])
def test_the_llm_user_is_the_default_unless_the_model_is_the_embedded_one(
        requested: str | None, model: str, user_model: str | None,
        expected: tuple[str, str | None, str]) -> None:
    choice = choose_user(requested, model, user_model)
    assert (choice.kind, choice.model, choice.label) == expected


def test_the_cli_applies_the_selection(tmp_path: Path) -> None:
    def config(*argv: str) -> Any:
        made = _config(build_parser().parse_args([str(tmp_path / "o.json"), *argv]))
        return LocoevalOptions.of(made)

    offline = config("--model", "local/smollm2")
    assert (offline.mock_user, offline.mock_user_why, offline.user_model) == \
        ("template", "offline default", None)
    remote = config("--model", "openai/gpt-4o")
    assert (remote.mock_user, remote.user_model) == ("llm", "openai/gpt-4o")
    own = config("--model", "openai/gpt-4o", "--user-model", "deepseek/chat")
    assert own.user_model == "deepseek/chat"  # --model only when no user model is given
    forced = config("--model", "openai/gpt-4o", "--mock-user", "template",
                    "--reference-queries", str(tmp_path / "q.txt"))
    assert (forced.mock_user, forced.mock_user_why) == ("template", "chosen")
    assert forced.references == tmp_path / "q.txt"
    with pytest.raises(ValueError):
        choose_user("robot", "openai/gpt-4o")


# -- the reference questions -------------------------------------------------------------


class WordsEmbedder:
    """Deterministic bag-of-words vectors: similarity = shared words."""

    name = "words"
    dim = 256

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


TAX = [f"is the tax rate rounded to cents in case {w}?" for w in
       ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa")]
OTHER = [f"where is the {w} {v} configured in the build?" for w in
         ("logging", "docker", "lint", "release", "cache")
         for v in ("file", "step", "flag", "image")]


def test_reference_file_lines_and_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("plain question one?\n\n"
                    + json.dumps({"query": "  json   question two? "}) + "\n"
                    + json.dumps({"text": "no query field"}) + "\n"
                    + "plain question one?\n", "utf-8")
    assert load_reference_queries(path) == ["plain question one?", "json question two?"]
    (tmp_path / "empty.txt").write_text("\n\n")
    with pytest.raises(ValueError, match="no questions"):
        load_reference_queries(tmp_path / "empty.txt")
    with pytest.raises(ValueError):
        load_reference_queries(tmp_path / "missing.txt")


def test_the_reference_is_drawn_at_random_among_the_top_10() -> None:
    pool = ReferenceQueries(OTHER[:7] + TAX + OTHER[7:], WordsEmbedder())
    text = "the tax rate is rounded to cents"
    assert set(pool.top(text)) == set(TAX) and len(pool.top(text)) == TOP_REFERENCES
    draws = [pool.draw(text, random.Random(seed)) for seed in range(40)]
    assert set(draws) <= set(TAX)
    assert len(set(draws)) >= 5  # at random among them, not always the nearest
    assert draws == [pool.draw(text, random.Random(seed)) for seed in range(40)]


def test_the_user_shows_a_seeded_reference(outline_file: Path, script: Any) -> None:
    outline = load_outline(outline_file)
    pool = ReferenceQueries(TAX + OTHER, WordsEmbedder(), source="q.txt")

    def user(seed: int) -> LLMUser:
        return LLMUser(outline, LLM(LLMConfig(model="scripted/u")), seed=seed,
                       references=pool)

    first = user(3)
    prompt = first.prompt(1, "")[1]["content"]  # q2: "About the tax rate."
    reference = first.drawn[1]
    assert reference in TAX and "style reference only" in prompt and reference in prompt
    assert user(3).reference(1) == reference  # same seed, same draw
    assert len({user(seed).reference(1) for seed in range(30)}) > 1
    assert first.reference_status == "1 drawn among the top 10 of 30 questions from q.txt"
    plain = LLMUser(outline, LLM(LLMConfig(model="scripted/u")))
    assert "style reference" not in plain.prompt(1, "")[1]["content"]
    assert plain.reference_status == SKIPPED


# -- what the results say ----------------------------------------------------------------


async def _run(tmp_path: Path, outline_file: Path, embedder: Any, **options: Any) -> dict:
    """The outline through ``empty``, with LoCoEval's ``options`` (mock user...)."""
    if options.get("reference_queries") is not None:
        options["reference_queries"] = str(options["reference_queries"])
    replay = Replay(ReplayConfig(backends=["empty"], model="scripted/t", out=tmp_path / "run",
                                 max_tokens=64, benchmark_options={"locoeval": options}),
                    embedder=embedder)
    try:
        return (await replay.run(load_source(outline_file)))[0]
    finally:
        replay.close()


async def test_results_say_which_user_ran_and_that_references_were_skipped(
        tmp_path: Path, outline_file: Path, script: Any, embedder: Any) -> None:
    script.default = user_reply
    row = await _run(tmp_path, outline_file, embedder, mock_user="llm",
                     mock_user_why="default with a non-embedded model")
    assert row["error"] is None
    assert row["mock_user"] == "llm (default with a non-embedded model)"
    assert row["user_model"] == "scripted/t"  # the answer model: no --user-model given
    assert row["reference_queries"] == SKIPPED
    assert not any("style reference" in m[-1]["content"] for m in script.calls)

    row = await _run(tmp_path, outline_file, embedder, mock_user_why="offline default")
    assert row["mock_user"] == "template (offline default)"
    assert row["reference_queries"] == "skipped (template user)"


async def test_results_count_the_references_drawn_from_a_file(
        tmp_path: Path, outline_file: Path, script: Any, embedder: Any) -> None:
    script.default = user_reply
    path = tmp_path / "questions.txt"
    path.write_text("\n".join(TAX + OTHER) + "\n", "utf-8")
    row = await _run(tmp_path, outline_file, embedder, mock_user="llm", user_model="scripted/u",
                     reference_queries=path)
    assert row["error"] is None and row["user_model"] == "scripted/u"
    queries = len(load_outline(outline_file).queries())
    assert row["reference_queries"] == (f"{queries} drawn among the top 10 of 30 questions "
                                        f"from {path}")
    shown = [m[-1]["content"] for m in script.calls if "style reference" in m[-1]["content"]]
    assert len(shown) == queries
    assert all(any(q in text for q in TAX + OTHER) for text in shown)
