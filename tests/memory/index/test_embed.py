from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import pytest

from memory.index.embed import (
    MINILM_DIM,
    ONNX_BATCH,
    OnnxMiniLMEmbedder,
    VectorCache,
    cosine,
    top_k,
)


def test_real_minilm_embeds_offline(embedder):
    vectors = embedder.embed(["open a database connection", "connect to postgres",
                              "bake a chocolate cake"])
    assert vectors.shape == (3, MINILM_DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    sims = cosine(vectors[0], vectors)
    assert sims[1] > sims[2] + 0.2


def test_empty_input_gives_an_empty_matrix(embedder):
    assert embedder.embed([]).shape == (0, MINILM_DIM)


def test_the_vector_cache_computes_each_text_once_and_keeps_order():
    calls: list[list[str]] = []

    def compute(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    cache = VectorCache(size=3)
    first = cache.embed(["ab", "abc", "ab"], 64, compute)
    assert calls == [["ab", "abc"]]
    assert first[:, 0].tolist() == [2.0, 3.0, 2.0]
    again = cache.embed(["abc", "abcd"], 64, compute)
    assert calls[-1] == ["abcd"] and again[:, 0].tolist() == [3.0, 4.0]
    cache.embed(["abc"], 32, compute)  # another truncation is another vector
    assert calls[-1] == ["abc"]
    cache.embed(["ab"], 64, compute)  # evicted: size 3, "ab" was least recent
    assert calls[-1] == ["ab"] and (cache.hits, cache.misses) == (2, 5)


def test_cached_minilm_vectors_equal_fresh_ones(embedder):
    texts = ["def parse_date(value): ...", "a cached query", "def parse_date(value): ..."]
    cached = embedder.embed(texts[:2])
    mixed = embedder.embed(texts)
    assert np.allclose(mixed[0], cached[0]) and np.allclose(mixed[2], cached[0])
    fresh = embedder.cache.embed(["a cached query"], 999,
                                 lambda t: embedder._run(t, embedder.max_seq_length))
    assert np.allclose(fresh[0], mixed[1], atol=1e-5)


def test_batches_group_texts_of_similar_token_length():
    from memory.index.embed import _by_length

    lengths = [128, 40, 42, 45, 128, 6, 51, 120]
    batches = _by_length(lengths, 3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [[lengths[i] for i in b] for b in batches] == [[6], [40, 42, 45], [51],
                                                          [120, 128, 128]]
    assert [len(b) for b in _by_length([10] * 7, 3)] == [3, 3, 1]


def test_a_text_gets_the_same_vector_alone_and_beside_longer_ones(embedder, monkeypatch):
    """Each batch is padded to its longest text only (a short text is not run at 128
    tokens beside a long one), and the padding does not reach a text's vector."""
    short = "test test_values.py::test_value_3 failed: AssertionError (turn 2)"
    others = ["a long test summary, " * 60, "x = 1", short + " and more words " * 4]
    alone = embedder._run([short], embedder.max_seq_length)[0]
    shapes: list[tuple[int, int]] = []
    session = embedder._session

    class Recording:
        def run(self, names: Any, feed: dict[str, np.ndarray]) -> Any:
            shapes.append(feed["input_ids"].shape)
            assert (feed["input_ids"][feed["attention_mask"] == 0] == 0).all()  # [PAD]
            return session.run(names, feed)

    monkeypatch.setattr(embedder, "_session", Recording())
    with_them = embedder._run([*others, short], embedder.max_seq_length)
    assert np.allclose(with_them[-1], alone, atol=1e-6)
    # three batches: "x = 1"; the short line with its longer twin; the long summary
    twin = len(embedder._tokenizer.encode(others[2]).ids)
    assert sorted(s[1] for s in shapes) == [5, twin, embedder.max_seq_length] and twin < 64



def test_batches_run_at_once_give_the_vectors_of_one_thread(embedder):
    """Batches embedded on two threads at once (each on one ONNX Runtime thread) give
    each text the vector it gets when the batches run one after another, in its row."""
    from memory.index.embed import ONNX_BATCH

    texts = [f"def helper_{i}(value): return value * {i}  # " + "word " * (i % 13)
             for i in range(ONNX_BATCH * 6 + 3)]
    at_once = OnnxMiniLMEmbedder(graph=embedder.graph, workers=2)
    one = OnnxMiniLMEmbedder(graph=embedder.graph, workers=1)
    threads: set[str] = set()
    session = at_once._session

    class Recording:
        def run(self, names: Any, feed: dict[str, np.ndarray]) -> Any:
            threads.add(threading.current_thread().name)
            return session.run(names, feed)

    at_once._session = Recording()  # type: ignore[assignment]
    assert np.array_equal(at_once._run(texts, 64), one._run(texts, 64))
    assert len(threads) == 2 and all(t.startswith("minilm") for t in threads)


def test_callers_embedding_at_once_share_the_batches_at_once(embedder):
    """Two callers embedding at once (an index build embeds two parts at a time) run no
    more batches at once than the embedder's workers, one batch on its own included."""
    from concurrent.futures import ThreadPoolExecutor

    one = OnnxMiniLMEmbedder(graph=embedder.graph, workers=1)
    session = one._session
    running, most = 0, 0
    lock = threading.Lock()

    class Counting:
        def run(self, names: Any, feed: dict[str, np.ndarray]) -> Any:
            nonlocal running, most
            with lock:
                running += 1
                most = max(most, running)
            try:
                return session.run(names, feed)
            finally:
                with lock:
                    running -= 1

    one._session = Counting()  # type: ignore[assignment]
    texts = [[f"def part_{p}_{i}(x): return x + {i}" for i in range(3)] for p in range(6)]
    with ThreadPoolExecutor(3) as callers:
        vectors = list(callers.map(lambda t: one._run(t, 64), texts))
    assert most == 1 and all(v.shape == (3, MINILM_DIM) for v in vectors)


def test_the_batch_size_does_not_change_a_vector(embedder, monkeypatch):
    """Texts go to ONNX Runtime in batches of ONNX_BATCH (less CPU than one batch of 64):
    each text's vector is the one it gets in a batch of 64."""
    texts = [f"def helper_{i}(value): return value * {i}  # " + "word " * (i % 9)
             for i in range(40)]
    assert embedder.batch_size == ONNX_BATCH < len(texts)
    small = embedder._run(texts, 64)
    monkeypatch.setattr(embedder, "batch_size", 64)
    assert np.allclose(embedder._run(texts, 64), small, atol=1e-6)


def test_top_k_is_a_stable_argsort_cut():
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 40, 300):
        scores = rng.integers(0, 6, size=n).astype(np.float32)  # many ties
        scores[rng.random(n) < 0.1] = -np.inf
        for k in (0, 1, 3, 7, n, n + 2):
            expected = np.argsort(-scores, kind="stable")[:k]
            assert top_k(scores, k).tolist() == expected.tolist(), (n, k)


# -- the ONNX embedder against sentence-transformers ------------------------------------
SAMPLE = [
    "open a database connection", "connect to postgres", "bake a chocolate cake",
    "app/db.py::migrate def migrate(conn, steps): Apply schema migrations in order.",
    "rich/console.py::Console.print def print(self, *objects, sep=' ', end='\\n')",
    "Ünïcode façade — 日本語のテキスト, emoji 🙂 and CamelCaseIdentifiers_with_snake",
    "x = 1", "",
    "a long text " * 200,  # truncated: 64 and 128 tokens
    "    def __init__(self, data):\n        self.data = data\n",
]


@pytest.fixture(scope="module")
def reference() -> Any:
    from memory.index.embed import MiniLMEmbedder

    return MiniLMEmbedder()


def test_the_default_minilm_runs_on_onnx_runtime(embedder):
    assert isinstance(embedder, OnnxMiniLMEmbedder)
    assert embedder.graph.is_file() and embedder.graph.suffix == ".onnx"


@pytest.mark.parametrize("max_tokens", [64, 128])
def test_onnx_vectors_match_sentence_transformers(embedder, reference, max_tokens):
    onnx = embedder._run(SAMPLE, max_tokens)  # the cache would hide a wrong truncation
    torch = reference.embed(SAMPLE, max_tokens=max_tokens)
    agreement = np.einsum("ij,ij->i", onnx, torch)
    assert agreement.min() >= 0.999, dict(zip(SAMPLE, agreement.round(5), strict=True))
    # and the two truncations really differ on the long text (it was cut at all)
    assert onnx.shape == (len(SAMPLE), MINILM_DIM)


def test_truncation_changes_a_long_text_only(embedder):
    short, long = embedder._run(SAMPLE, 64), embedder._run(SAMPLE, 128)
    cut = [i for i in range(len(SAMPLE)) if not np.allclose(short[i], long[i], atol=1e-5)]
    assert [SAMPLE[i][:12] for i in cut] == ["a long text "]


def test_the_graph_is_exported_once_into_the_cache_dir(tmp_path, monkeypatch, capsys):
    from memory.index.embed import ensure_minilm_onnx

    monkeypatch.setenv("ENGRAM_CACHE", str(tmp_path))
    graph = ensure_minilm_onnx()
    assert graph.parent == tmp_path / "models" and graph.is_file()
    assert "exporting all-MiniLM-L6-v2 to ONNX" in capsys.readouterr().err
    stamp = graph.stat().st_mtime_ns
    assert ensure_minilm_onnx() == graph and graph.stat().st_mtime_ns == stamp
    assert capsys.readouterr().err == ""  # no second export, no progress line
    assert [p.name for p in graph.parent.iterdir()] == [graph.name]  # no temp files left
    fresh = OnnxMiniLMEmbedder(graph=graph)
    assert fresh.embed(["x = 1"]).shape == (1, MINILM_DIM)


def test_torch_is_used_on_request_or_when_onnx_fails(monkeypatch):
    import memory.index.embed as embed

    monkeypatch.setattr(embed, "MiniLMEmbedder", lambda: "sentence-transformers")
    monkeypatch.setenv("ENGRAM_MINILM", "torch")
    assert embed._minilm() == "sentence-transformers"
    monkeypatch.delenv("ENGRAM_MINILM")

    def broken(**_: Any) -> Any:
        raise RuntimeError("no onnxruntime here")

    monkeypatch.setattr(embed, "OnnxMiniLMEmbedder", broken)
    assert embed._minilm() == "sentence-transformers"


def test_without_onnx_and_torch_the_error_names_the_extra(monkeypatch):
    import importlib.util

    import memory.index.embed as embed

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None
                        if name == "sentence_transformers" else real(name, *a))
    monkeypatch.setenv("ENGRAM_MINILM", "torch")  # as if ONNX Runtime had failed
    with pytest.raises(embed.EmbedError, match=r"pip install 'engram\[torch\]'"):
        embed._minilm()


def test_minilm_runs_on_the_threads_the_developer_sets(monkeypatch):
    """``ENGRAM_EMBED_THREADS`` sets how many batches run at once, each on one ONNX
    Runtime thread (unset: one per core this process may use); a value that is not a
    positive number is refused with its name."""
    from memory.index.embed import EmbedError, _minilm, embed_threads, embed_workers

    monkeypatch.setenv("ENGRAM_EMBED_THREADS", " 1 ")
    one = OnnxMiniLMEmbedder()
    assert one.workers == 1
    assert one._session.get_session_options().intra_op_num_threads == 1
    vectors = one.embed(["parse_date returns UTC datetimes.", "slugify lower-cases."])
    assert vectors.shape == (2, MINILM_DIM)
    monkeypatch.setenv("ENGRAM_EMBED_THREADS", "3")
    assert OnnxMiniLMEmbedder().workers == 3
    monkeypatch.delenv("ENGRAM_EMBED_THREADS")
    assert embed_threads() == 0
    assert embed_workers() == len(os.sched_getaffinity(0))
    unset = OnnxMiniLMEmbedder()
    assert unset._session.get_session_options().intra_op_num_threads == 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("ENGRAM_EMBED_THREADS", bad)
        with pytest.raises(EmbedError, match=f"ENGRAM_EMBED_THREADS='{bad}' is not a positive"):
            embed_threads()
    with pytest.raises(EmbedError, match="ENGRAM_EMBED_THREADS"):
        _minilm()  # refused, not a silent fall back to sentence-transformers
