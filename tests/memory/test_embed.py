from __future__ import annotations

import numpy as np

from memory.embed import MINILM_DIM, VectorCache, cosine, top_k


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
    fresh = embedder.cache.embed(["a cached query"], 999, lambda t: embedder._model.encode(
        t, normalize_embeddings=True))
    assert np.allclose(fresh[0], mixed[1], atol=1e-5)


def test_top_k_is_a_stable_argsort_cut():
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 40, 300):
        scores = rng.integers(0, 6, size=n).astype(np.float32)  # many ties
        scores[rng.random(n) < 0.1] = -np.inf
        for k in (0, 1, 3, 7, n, n + 2):
            expected = np.argsort(-scores, kind="stable")[:k]
            assert top_k(scores, k).tolist() == expected.tolist(), (n, k)
