"""Commands that need no LLM never import one: each runs as a real process (the CLI's
``main``) and reports the modules it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import FORMS, make_repo

LLM_STACK = ("torch", "transformers", "sentence_transformers", "litellm")
RUN_CLI = ("import json, sys\n"
           "from tui.cli import main\n"
           "try:\n"
           "    code = main(sys.argv[2:])\n"
           "except SystemExit as exc:  # --help\n"
           "    code = exc.code or 0\n"
           "json.dump(sorted(sys.modules), open(sys.argv[1], 'w'))\n"
           "sys.exit(code)\n")


def imported(tmp_path: Path, *argv: str, code: str = RUN_CLI) -> set[str]:
    """Top-level package names imported by a fresh interpreter running ``code``."""
    out = tmp_path / f"modules-{len(list(tmp_path.glob('modules-*')))}.json"
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-c", code, str(out), *argv], env=env,
                            capture_output=True, text=True, timeout=300,
                            cwd=Path(__file__).parents[2])
    assert result.returncode == 0, result.stderr[-2000:]
    return {name.split(".")[0] for name in json.loads(out.read_text())}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app/forms.py": FORMS, "README.md": "# r\n"})


def test_index_builds_without_the_llm_stack_and_reopens_without_lancedb(tmp_path, repo):
    built = imported(tmp_path, "index", "--repo", str(repo))
    assert "onnxruntime" in built and "lancedb" in built  # it did embed and store
    assert not built.intersection(LLM_STACK), built.intersection(LLM_STACK)
    reopened = imported(tmp_path, "index", "--repo", str(repo))
    heavy = reopened.intersection((*LLM_STACK, "lancedb", "onnxruntime", "tokenizers"))
    assert not heavy, f"a no-change `engram index` imported {sorted(heavy)}"


def test_an_index_run_leaves_its_objects_out_of_the_exit_collection(tmp_path, repo):
    """`engram index` freezes the garbage collector's objects at exit (the last
    collection would walk lancedb's and pydantic's classes only to free memory), after
    everything is written: the next run finds nothing to do."""
    code = ("import atexit, gc, sys\n"
            "report = lambda: open(sys.argv[1], 'w').write(str(gc.get_freeze_count()))\n"
            "atexit.register(report)  # runs after what the command registers\n"
            "from tui.cli import main\n"
            "sys.exit(main(sys.argv[2:]))\n")
    out = tmp_path / "frozen"
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-c", code, str(out), "index", "--repo", str(repo)]
    first = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                           cwd=Path(__file__).parents[2])
    assert first.returncode == 0, first.stderr[-2000:]
    assert int(out.read_text()) > 1000
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                           cwd=Path(__file__).parents[2])
    assert again.returncode == 0 and " 0 re-indexed" in again.stdout, again.stdout


def test_listing_backends_imports_no_model_and_no_store(tmp_path):
    modules = imported(tmp_path, "backends")
    assert not modules.intersection((*LLM_STACK, "lancedb", "onnxruntime"))


def test_replay_score_loads_its_grader_without_the_llm_stack(tmp_path):
    modules = imported(tmp_path, "replay", "score", "--help")
    assert "replay" in modules and not modules.intersection(LLM_STACK)


def test_the_app_module_imports_nothing_heavy_before_the_first_frame(tmp_path):
    code = ("import json, sys\nimport tui.cli, tui.app\n"
            "json.dump(sorted(sys.modules), open(sys.argv[1], 'w'))\n")
    modules = imported(tmp_path, code=code)
    assert "textual" in modules
    assert not modules.intersection((*LLM_STACK, "lancedb", "onnxruntime", "pyarrow"))


def test_checking_an_embedded_model_name_imports_no_litellm(tmp_path):
    code = ("import json, sys\nfrom memory.llm.client import LLMError, check_model\n"
            "check_model('local/smollm2')\n"
            "try:\n    check_model('local/nope')\nexcept LLMError:\n    pass\n"
            "else:\n    sys.exit(3)\n"
            "json.dump(sorted(sys.modules), open(sys.argv[1], 'w'))\n")
    assert "litellm" not in imported(tmp_path, code=code)


# as if torch were not installed: every finder answers "no such module" for it
BLOCK_TORCH = ("import sys\n"
               "HIDDEN = ('torch', 'transformers', 'sentence_transformers')\n"
               "class Hide:\n"
               "    def __init__(self, inner):\n"
               "        self.inner = inner\n"
               "    def __getattr__(self, name):\n"
               "        return getattr(self.inner, name)\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] in HIDDEN:\n"
               "            return None\n"
               "        return self.inner.find_spec(name, path, target)\n"
               "sys.meta_path[:] = [Hide(f) for f in sys.meta_path]\n"
               "import importlib.util\n"
               "assert importlib.util.find_spec('torch') is None\n")


@pytest.mark.slow
def test_an_answer_with_the_embedded_model_needs_no_torch(tmp_path, repo):
    """engram's runtime without the optional ``torch`` extra: index, retrieval and an
    answer from local/smollm2 (the fresh process cannot import torch at all), and
    without litellm: the embedded model is called directly."""
    code = BLOCK_TORCH + RUN_CLI
    modules = imported(tmp_path, "ask", "how are forms validated?", "--repo", str(repo),
                       "--model", "local/smollm2", "--max-tokens", "8", code=code)
    assert {"llama_cpp", "onnxruntime"} <= modules
    assert not modules.intersection(("torch", "transformers", "sentence_transformers",
                                     "litellm"))


def test_an_index_build_imports_neither_the_lance_rest_client_nor_a_session(tmp_path, repo):
    """LanceDB's namespace REST client (pydantic validators for every API method, most of
    `import lancedb`'s time) is never entered by building and searching an index."""
    code = ("import json, sys\n"
            "from tui.cli import main\n"
            "main(sys.argv[2:])\n"
            "json.dump(sorted(sys.modules), open(sys.argv[1], 'w'))\n")
    out = tmp_path / "modules.json"
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-c", code, str(out), "index", "--repo",
                             str(repo)], env=env, capture_output=True, text=True,
                            timeout=300, cwd=Path(__file__).parents[2])
    assert result.returncode == 0, result.stderr[-2000:]
    modules = set(json.loads(out.read_text()))
    assert "lancedb" in modules
    assert not {m for m in modules if m.startswith("lance_namespace_urllib3_client.api")}
    # nor the parts of a session (backends, LLM client, agent): `engram index` opens the
    # index alone (memory.index.repo.open_index)
    assert not {"memory.session", "memory.backends", "memory.turn.agent"} & modules
    # nor GitPython: the refresh's git commands run directly (a quarter of a no-change
    # reopen's CPU was its import)
    assert "git" not in modules


def test_lancedb_is_imported_without_the_overrides_checks(tmp_path):
    """On Python 3.11 lancedb's ``@override`` (the ``overrides`` package) disassembles each
    class body to check every method against its base; the import marks the methods as
    ``typing.override`` does on 3.12, and leaves the decorator as it was for others. The
    database still works."""
    code = ("import sys, overrides\n"
            "o = sys.modules['overrides.overrides']  # the package names a function so\n"
            "checked = []\n"
            "real = o._get_base_class_names\n"
            "o._get_base_class_names = lambda *a: checked.append(1) or real(*a)\n"
            "decorator = overrides.override\n"
            "from memory.store import Store\n"
            "store = Store(sys.argv[1])\n"
            "import pyarrow as pa\n"
            "table = store.table('t', pa.schema([pa.field('id', pa.string())]))\n"
            "store.add(table, [{'id': 'a'}])\n"
            "assert store.rows(table, ['id']) == [{'id': 'a'}]\n"
            "import lancedb.db\n"
            "assert lancedb.db.LanceDBConnection.open_table.__override__\n"
            "assert overrides.override is decorator and not checked, len(checked)\n")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "db")],
                            capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).parents[2])
    assert result.returncode == 0, result.stderr[-2000:]


def test_lancedbs_pydantic_models_build_on_first_use(tmp_path):
    """The ~200 pydantic models lancedb defines build their validators when first used,
    not during ``import lancedb``; models defined afterwards build as pydantic's default
    says."""
    code = ("import pydantic\n"
            "from memory.store import import_lancedb\n"
            "import_lancedb()\n"
            "from lance_namespace import ListTablesResponse as Listed\n"
            "assert not Listed.__pydantic_complete__\n"
            "assert Listed(tables=['a']).tables == ['a'] and Listed.__pydantic_complete__\n"
            "assert 'defer_build' not in pydantic.BaseModel.model_config\n"
            "class Later(pydantic.BaseModel):\n"
            "    x: int\n"
            "assert Later.__pydantic_complete__\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=Path(__file__).parents[2])
    assert result.returncode == 0, result.stderr[-2000:]
