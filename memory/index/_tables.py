"""The tables of a repository index (``memory.index.repo``): one row per chunk (its location,
key, code and key vector) and one per indexed file (its signature, its chunk count)."""

from __future__ import annotations

from typing import Any

CHUNK_FIELDS = ("path", "qualname", "kind", "start", "end", "key", "code")


def chunks_schema(dim: int) -> Any:
    import pyarrow as pa  # with LanceDB, only when a table is opened

    return pa.schema([
        pa.field("id", pa.string()), pa.field("path", pa.string()),
        pa.field("qualname", pa.string()), pa.field("kind", pa.string()),
        pa.field("start", pa.int32()), pa.field("end", pa.int32()),
        pa.field("key", pa.string()), pa.field("code", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


def files_schema() -> Any:
    import pyarrow as pa

    return pa.schema([pa.field("path", pa.string()), pa.field("sig", pa.string()),
                      pa.field("chunks", pa.int32())])
