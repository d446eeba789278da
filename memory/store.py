"""The one module that knows LanceDB: connection, tables, indexes, searches."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memory.redact import redact, secret_values

# LanceDB warns on every fork; ours are subprocess launches (git, pytest) that exec at
# once and never touch LanceDB, so the warning is noise in every replay and index run.
warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)

# Below this many rows a flat (exact) vector scan is faster than any ANN index.
VECTOR_INDEX_MIN_ROWS = 20_000
KEY_COLUMNS = frozenset({"id", "scope", "path"})


# lancedb imports the Lance namespace's generated REST client for a few of its models;
# the client's package __init__ also builds a pydantic validator for every method of its
# nine API classes, which engram never calls (no REST namespace): 2.7 of the 3.4 CPU
# seconds of `import lancedb` with lance-namespace 0.13, paid by every process that opens
# the index (a one-file refresh, `engram ask`, the app). So that package is entered
# without running its __init__ (its submodules, the models, import as usual), and its
# __init__ runs on the first use of one of its own names.
_REST_CLIENT = "lance_namespace_urllib3_client"


def _defer_package_init(name: str) -> None:
    """Put package ``name`` in ``sys.modules`` with its ``__path__`` but its ``__init__``
    not yet run; the first attribute looked up on it runs the ``__init__``. Nothing is
    done when it is imported already, not installed, or not a package."""
    import importlib.util
    import sys

    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return
    module = importlib.util.module_from_spec(spec)
    loaded = False

    def __getattr__(attribute: str) -> Any:  # a module's __getattr__ (PEP 562)
        nonlocal loaded
        if not loaded:
            loaded = True
            del module.__getattr__
            spec.loader.exec_module(module)
            return getattr(module, attribute)
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[name] = module


@contextlib.contextmanager
def _override_marks_only() -> Iterator[None]:
    """``overrides.override`` only marks a method as overriding (as ``typing.override``
    does, which lancedb uses from Python 3.12 on) while this lasts: on 3.11 lancedb's
    ``@override`` checks each method against its base by disassembling the class body,
    0.16 of the ~1.1 CPU seconds of ``import lancedb``. ``EnforceOverrides`` still finds
    the marks."""
    try:
        import overrides
    except ImportError:
        yield
        return

    def mark(method: Any = None, **_: Any) -> Any:
        def marked(function: Any) -> Any:
            function.__override__ = True
            return function

        return marked if method is None else marked(method)

    checking = overrides.override
    overrides.override = mark
    try:
        yield
    finally:
        overrides.override = checking


@contextlib.contextmanager
def _pydantic_builds_deferred() -> Iterator[None]:
    """Pydantic models defined while this lasts build their validators and serializers
    on first use (pydantic's ``defer_build``) rather than when the class is made: lancedb
    defines about 200 (the Lance namespace's request and response models, the embedding
    functions' configurations), and a local index validates none of them. 0.15 of the
    ~0.9 CPU s of ``import lancedb`` (six imports each way, medians 0.73 vs 0.89 s)."""
    try:
        from pydantic import BaseModel
    except ImportError:
        yield
        return
    config = BaseModel.model_config
    BaseModel.model_config = {**config, "defer_build": True}  # what subclasses inherit
    try:
        yield
    finally:
        BaseModel.model_config = config


def import_lancedb() -> Any:
    """``lancedb``, imported without the REST client's validators (see above), without
    the ``overrides`` package's checks and with its pydantic models built on first use."""
    import sys

    if "lancedb" not in sys.modules:
        _defer_package_init(_REST_CLIENT)
        with _override_marks_only(), _pydantic_builds_deferred():
            import lancedb
    import lancedb

    return lancedb


def quote(value: str) -> str:
    """A string literal for a LanceDB ``where`` clause."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: list[str]) -> str:
    return f"{column} IN ({', '.join(quote(v) for v in values)})"


def _redacted(row: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
    out = dict(row)
    for key, value in row.items():
        if key in KEY_COLUMNS or key.endswith("_id"):
            continue
        if isinstance(value, str):
            out[key] = redact(value, secrets)
        elif isinstance(value, list) and value and isinstance(value[0], str):
            out[key] = [redact(v, secrets) if isinstance(v, str) else v for v in value]
    return out


def is_uri(location: Path | str) -> bool:
    """An object-store location LanceDB opens itself (``s3://...``, ``gs://...``)."""
    return isinstance(location, str) and "://" in location


class Store:
    """A LanceDB database in a folder (``index.lance``), or at an object-store URI."""

    def __init__(self, path: Path | str) -> None:
        self.uri = str(path) if is_uri(path) else ""
        self.path = Path(path) if not self.uri else Path(self.uri.split("://", 1)[1])
        if not self.uri:
            self.path.mkdir(parents=True, exist_ok=True)
        self._connection: Any = None
        self._lock = threading.RLock()

    @property
    def _db(self) -> Any:
        """The LanceDB connection, made on first use: importing lancedb costs 0.5-1 s, and a
        refresh that finds nothing changed never needs it."""
        with self._lock:
            if self._connection is None:
                lancedb = import_lancedb()
                self._connection = lancedb.connect(self.uri or str(self.path))
            return self._connection

    def table_names(self) -> list[str]:
        listed = self._db.list_tables()
        return list(getattr(listed, "tables", listed))

    def table(self, name: str, schema: Any) -> Any:
        """Open ``name``, creating it empty with ``schema``; a table whose schema no
        longer matches (say, another embedding dimension) is recreated empty."""
        with self._lock:
            if name in self.table_names():
                table = self._db.open_table(name)
                if table.schema.equals(schema, check_metadata=False):
                    return table
                self._db.drop_table(name)
            return self._db.create_table(name, schema=schema)

    def drop(self, name: str) -> None:
        with self._lock:
            if name in self.table_names():
                self._db.drop_table(name)

    @staticmethod
    def rows(table: Any, columns: list[str], where: str | None = None) -> list[dict[str, Any]]:
        """All rows (only ``columns``) matching ``where``."""
        if table.count_rows() == 0:
            return []
        query = table.search().select(columns).limit(None)
        if where:
            query = query.where(where)
        return query.to_list()

    @staticmethod
    def vectors(table: Any, id_column: str = "id", column: str = "vector",
                extra: tuple[str, ...] = ()) -> tuple[list[str], np.ndarray, dict[str, list]]:
        """Every row's id and vector (a float32 matrix, read without Python floats), plus
        ``extra`` columns as lists."""
        if table.count_rows() == 0:
            return [], np.zeros((0, 0), dtype=np.float32), {c: [] for c in extra}
        data = table.search().select([id_column, column, *extra]).limit(None).to_arrow()
        vectors = data.column(column).combine_chunks()
        dim = vectors.type.list_size
        matrix = vectors.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        return (data.column(id_column).to_pylist(), matrix.reshape(-1, dim),
                {c: data.column(c).to_pylist() for c in extra})

    @staticmethod
    def add(table: Any, rows: list[dict[str, Any]]) -> None:
        """Append ``rows``; their text is redacted first (every LanceDB write goes through
        here). Identifier columns (``id``, ``*_id``, ``scope``, ``path``) are kept as given:
        rows are found again by them."""
        if rows:
            secrets = secret_values()  # the environment read once per write, not per row
            table.add([_redacted(row, secrets) for row in rows])

    @staticmethod
    def delete(table: Any, where: str) -> None:
        table.delete(where)

    @staticmethod
    def vector_search(table: Any, vector: np.ndarray, k: int, where: str | None = None,
                      columns: list[str] | None = None) -> list[dict[str, Any]]:
        """Nearest rows by cosine distance (``_distance``), best first."""
        if table.count_rows() == 0:
            return []
        query = table.search(np.asarray(vector, dtype=np.float32)).metric("cosine").limit(k)
        if columns:
            query = query.select([*columns, "_distance"])
        if where:
            query = query.where(where, prefilter=True)
        return query.to_list()

    @staticmethod
    def text_search(table: Any, text: str, k: int, where: str | None = None,
                    columns: list[str] | None = None) -> list[dict[str, Any]]:
        """BM25 hits over the table's full-text index (``_score``), best first."""
        if table.count_rows() == 0 or not text.strip():
            return []
        query = table.search(text, query_type="fts").limit(k)
        if columns:
            query = query.select([*columns, "_score"])
        if where:
            query = query.where(where, prefilter=True)
        try:
            return query.to_list()
        except Exception:  # a query the FTS parser rejects finds nothing
            return []

    @staticmethod
    def ensure_fts(table: Any, column: str) -> None:
        """A BM25 index on ``column``; rows added later are still searched (unindexed scan),
        so rebuilding is needed only after large changes."""
        from lancedb.index import FTS

        if table.count_rows() == 0:
            return
        table.create_index(column, config=FTS(), replace=True)

    @staticmethod
    def ensure_vector_index(table: Any, column: str = "vector") -> bool:
        """An ANN index once the table is large enough for one to pay; returns True if built."""
        if table.count_rows() < VECTOR_INDEX_MIN_ROWS:
            return False
        table.create_index(metric="cosine", vector_column_name=column,
                           index_type="IVF_HNSW_SQ", replace=True)
        return True

    @staticmethod
    def has_index(table: Any, column: str) -> bool:
        return any(column in ix.columns for ix in table.list_indices())
