"""Write the shipped all-MiniLM-L6-v2 as an ONNX graph, from its safetensors, without torch.

The model is a plain BERT encoder (absolute positions, post-LayerNorm, exact GELU).
The graph is built operator by operator with ``onnx.helper`` from the weights in
``model.safetensors``, so exporting needs neither torch nor transformers: ``onnx``
and numpy, about a second. Inputs ``input_ids`` and ``attention_mask`` (int64,
batch x sequence); output ``last_hidden_state`` (float32, batch x sequence x hidden).
Mean pooling and normalisation are the caller's (``memory.index.embed``).

``tests/memory/index/test_embed.py`` checks the vectors against sentence-transformers'.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization; every ONNX Runtime of the last three years runs it
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


class ExportError(RuntimeError):
    """The weights are not the BERT encoder this builder knows."""


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file as a numpy array (the format is a JSON
    header followed by raw little-endian buffers)."""
    with path.open("rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
        data = fh.read()
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _DTYPES:
            raise ExportError(f"{path.name}: tensor {name} has dtype {info['dtype']}")
        start, end = info["data_offsets"]
        array = np.frombuffer(data[start:end], dtype=_DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).astype(np.float32
                                                            if info["dtype"] == "F16"
                                                            else array.dtype)
    return tensors


class _Graph:
    """Collects nodes and initializers; names are generated."""

    def __init__(self) -> None:
        from onnx import helper

        self.helper = helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, value: np.ndarray, hint: str = "c") -> str:
        from onnx import numpy_helper

        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def dense(self, x: str, weights: dict[str, np.ndarray], prefix: str) -> str:
        """``x @ W.T + b`` for a torch Linear's ``prefix.weight`` / ``prefix.bias``."""
        w = self.const(weights[f"{prefix}.weight"].T, "w")
        b = self.const(weights[f"{prefix}.bias"], "b")
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x: str, weights: dict[str, np.ndarray], prefix: str,
                   eps: float) -> str:
        scale = self.const(weights[f"{prefix}.weight"], "ln_w")
        bias = self.const(weights[f"{prefix}.bias"], "ln_b")
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def _check(config: dict[str, Any]) -> None:
    if config.get("model_type") != "bert":
        raise ExportError(f"model_type {config.get('model_type')!r} is not bert")
    if config.get("hidden_act") != "gelu":
        raise ExportError(f"activation {config.get('hidden_act')!r} is not exact gelu")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ExportError("only absolute position embeddings are supported")


def build_model(model_dir: Path) -> Any:
    """The ONNX ``ModelProto`` of the BERT encoder in ``model_dir``."""
    from onnx import TensorProto, helper

    config = json.loads((model_dir / "config.json").read_text())
    _check(config)
    weights = read_safetensors(model_dir / "model.safetensors")
    weights = {k.removeprefix("bert."): v for k, v in weights.items()}
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(config["layer_norm_eps"])
    g = _Graph()

    ids, mask = "input_ids", "attention_mask"
    # embeddings: word + position[:seq] + token type 0 (engram never passes segments)
    words = g.op("Gather", [g.const(weights["embeddings.word_embeddings.weight"], "wemb"), ids])
    seq = g.op("Shape", [ids], start=1, end=2)  # [seq], 1-D
    positions = g.op("Slice", [g.const(weights["embeddings.position_embeddings.weight"], "pemb"),
                               g.const(np.array([0], dtype=np.int64)), seq,
                               g.const(np.array([0], dtype=np.int64))])
    type0 = g.const(weights["embeddings.token_type_embeddings.weight"][0], "temb")
    x = g.op("Add", [g.op("Add", [words, positions]), type0])
    x = g.layer_norm(x, weights, "embeddings.LayerNorm", eps)

    # additive attention mask, batch x 1 x 1 x seq: 0 where attended, -10000 at padding
    keep = g.op("Cast", [mask], to=TensorProto.FLOAT)
    bias = g.op("Mul", [g.op("Sub", [g.const(np.array(1.0, np.float32)), keep]),
                        g.const(np.array(-10000.0, np.float32))])
    bias = g.op("Unsqueeze", [bias, g.const(np.array([1, 2], dtype=np.int64))])

    split = g.const(np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge = g.const(np.array([0, 0, hidden], dtype=np.int64))
    scale = g.const(np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    for n in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{n}"

        def heads_of(name: str, perm: list[int], p: str = p, x: str = x) -> str:
            projected = g.dense(x, weights, f"{p}.attention.self.{name}")
            return g.op("Transpose", [g.op("Reshape", [projected, split])], perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge])
        attended = g.dense(context, weights, f"{p}.attention.output.dense")
        x = g.layer_norm(g.op("Add", [attended, x]), weights,
                         f"{p}.attention.output.LayerNorm", eps)
        inner = g.dense(x, weights, f"{p}.intermediate.dense")
        # exact GELU: 0.5 * h * (1 + erf(h / sqrt(2)))
        erf = g.op("Erf", [g.op("Div", [inner, g.const(np.array(np.sqrt(2.0), np.float32))])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.const(np.array(0.5, np.float32))]),
                            g.op("Add", [erf, g.const(np.array(1.0, np.float32))])])
        out = g.dense(gelu, weights, f"{p}.output.dense")
        x = g.layer_norm(g.op("Add", [out, x]), weights, f"{p}.output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        g.nodes, "minilm",
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       ["batch", "seq", hidden])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="engram")
    model.ir_version = 8  # readable by ONNX Runtime >= 1.14
    return model


def export(model_dir: Path, dest: Path, *, quantize: bool = False) -> Path:
    """Write the graph of ``model_dir`` to ``dest`` (atomically: concurrent first uses, say
    replay workers, each write a temporary file and rename it into place)."""
    import os

    import onnx

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        onnx.save_model(build_model(model_dir), str(tmp))
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            fp32, tmp = tmp, tmp.with_suffix(".q.tmp")
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
            fp32.unlink()
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest
