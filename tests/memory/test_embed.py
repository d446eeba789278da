from __future__ import annotations

import numpy as np

from memory.embed import MINILM_DIM, cosine


def test_real_minilm_embeds_offline(embedder):
    vectors = embedder.embed(["open a database connection", "connect to postgres",
                              "bake a chocolate cake"])
    assert vectors.shape == (3, MINILM_DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    sims = cosine(vectors[0], vectors)
    assert sims[1] > sims[2] + 0.2


def test_empty_input_gives_an_empty_matrix(embedder):
    assert embedder.embed([]).shape == (0, MINILM_DIM)
