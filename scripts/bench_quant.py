"""Would int8 dynamic quantization of the ONNX MiniLM keep retrieval? (It is not shipped.)

Embeds every chunk key of the benchmark tree (textual + rich) with the fp32 graph and
an int8 copy (onnxruntime.quantization.quantize_dynamic), then compares, for the bench
queries and for a sample of the keys used as queries: top-10 agreement by vector
similarity (|top10_int8 ∩ top10_fp32| / 10), the cosine between the two vectors of each
key, and embedding throughput.

    .venv/bin/python scripts/bench_quant.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _bench import build_tree, load
from bench_index import QUERIES


def keys_of(root: Path) -> list[str]:
    from memory.index.chunks import chunk_file

    keys = []
    for path in sorted(root.rglob("*.py")):
        keys += [c.key for c in chunk_file(path.relative_to(root).as_posix(), path.read_bytes())]
    return keys


def top10(queries: np.ndarray, keys: np.ndarray) -> list[set[int]]:
    sims = np.einsum("qd,kd->qk", queries, keys)
    return [set(np.argsort(-row, kind="stable")[:10].tolist()) for row in sims]


def main() -> None:
    from memory.index._bert_onnx import export
    from memory.index.embed import OnnxMiniLMEmbedder, ensure_minilm_onnx, minilm_path

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        build_tree(root)
        keys = keys_of(root)
        fp32 = OnnxMiniLMEmbedder(graph=ensure_minilm_onnx())
        int8 = OnnxMiniLMEmbedder(graph=export(minilm_path(), Path(tmp) / "int8.onnx",
                                               quantize=True))
        vectors, seconds = {}, {}
        for name, embedder in (("fp32", fp32), ("int8", int8)):
            start = time.perf_counter()
            vectors[name] = embedder._run(keys, 64)
            seconds[name] = time.perf_counter() - start
        sample = np.random.default_rng(0).choice(len(keys), 200, replace=False)
        print(f"{len(keys)} chunk keys; {load()}")
        for label, (qa, qb) in {
            f"{len(QUERIES)} bench queries": (fp32._run(QUERIES, 128), int8._run(QUERIES, 128)),
            "200 keys as queries": (vectors["fp32"][sample], vectors["int8"][sample]),
        }.items():
            ref, quant = top10(qa, vectors["fp32"]), top10(qb, vectors["int8"])
            agreement = [len(a & b) / 10 for a, b in zip(ref, quant, strict=True)]
            print(f"recall@10 agreement int8 vs fp32, {label}: mean {np.mean(agreement):.3f}, "
                  f"min {min(agreement):.1f}")
        cos = np.einsum("ij,ij->i", vectors["fp32"], vectors["int8"])
        print(f"cosine int8 vs fp32 per key: mean {cos.mean():.4f}, min {cos.min():.4f}")
        for name, embedder in (("fp32", fp32), ("int8", int8)):
            print(f"{name}: {len(keys) / seconds[name]:.0f} keys/s ({seconds[name]:.1f}s), "
                  f"graph {embedder.graph.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
