"""Shared fixtures: real git repos in tmp dirs, the real MiniLM, a scripted LLM.

The scripted LLM is a litellm custom provider (``scripted/...``) that lives only
here, in tests: deterministic replies for logic tests. Real-model tests use
``local/smollm2``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# llama.cpp's OpenMP threads wait passively (memory/llm/local/model.py sets this too, but too late
# in a test process: torch, imported first by the embedder's reference tests, brings its own
# libgomp.so.1, which llama.cpp then shares, already spinning: 96 tokens of SmolLM2 took
# 485 s instead of 11 s on the loaded 2-core machine)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

Reply = str | Callable[[list[dict[str, Any]]], str]


class Script:
    """Replies for the ``scripted`` provider: queued first, else ``default``."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.default: Reply = "scripted answer"
        self.calls: list[list[dict[str, Any]]] = []
        # report prompt tokens as the words of the messages (replay's token metrics), or by
        # a counter (messages -> tokens); off by default: the app's snapshots show a fixed count
        self.count_prompt: bool | Callable[[list[dict[str, Any]]], int] = False
        self.piece_words = 1  # words per streamed piece (long scripted answers: more)

    def push(self, *replies: Reply) -> None:
        self.queue.extend(replies)

    def reply(self, messages: list[dict[str, Any]]) -> str:
        self.calls.append(messages)
        reply = self.queue.popleft() if self.queue else self.default
        return reply(messages) if callable(reply) else reply


SCRIPT = Script()


# What orders the work handed to the xdist workers, the longest first: the seconds a whole run
# measured (tests/durations.json: its --durations, setup + call; scripts/durations_table.py
# rewrites it from a run's output), else a rough cost in seconds of a lightly loaded 2-core machine.
_MEASURED: dict[str, float] = json.loads(
    (Path(__file__).parent / "durations.json").read_text())["seconds"]
_COST_MARKS = {"slow": 60, "server": 60}  # the real SmolLM2, embedded or served
_COST_MODULE_FIXTURE = 20  # an unmeasured module-scoped fixture (a replay run, a Ray instance)


def _module_fixtures(item: pytest.Item) -> list[str]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [name for name in info.names_closure
            if (defs := info.name2fixturedefs.get(name)) and defs[-1].scope == "module"]


def _longest_first(items: list[pytest.Item]) -> None:
    """Order the work units (an xdist group, else one test) by their estimated cost, the
    longest first (ties keep collection order): xdist hands out units in collection order
    (``--no-loadscope-reorder``, see pyproject.toml), and a long test sent last left one
    worker running alone at the end."""
    cost: dict[str, float] = {}
    fixtures: dict[str, set[str]] = {}
    first: dict[str, int] = {}

    def unit(item: pytest.Item) -> str:
        mark = item.get_closest_marker("xdist_group")
        return f"@{mark.args[0] if mark and mark.args else mark.kwargs.get('name')}" \
            if mark else item.nodeid

    measured: set[str] = set()
    for index, item in enumerate(items):
        key = unit(item)
        first.setdefault(key, index)
        if item.nodeid in _MEASURED:
            measured.add(key)
            seconds = _MEASURED[item.nodeid]
        else:
            seconds = 1 + sum(weight for mark, weight in _COST_MARKS.items()
                              if item.get_closest_marker(mark))
        cost[key] = cost.get(key, 0) + seconds
        fixtures.setdefault(key, set()).update(_module_fixtures(item))
    for key, names in fixtures.items():
        if key not in measured:  # a measured unit's fixtures are in its seconds
            cost[key] += _COST_MODULE_FIXTURE * len(names)
    items.sort(key=lambda item: (-cost[unit(item)], first[unit(item)]))


def pytest_configure(config: pytest.Config) -> None:
    """A pytest-xdist worker runs llama.cpp and ONNX Runtime on its share of the cores (one
    thread each on 2 cores with 2 workers): a second thread on a core the other worker
    keeps busy made SmolLM2 slower (6.2 vs 5.7 s for 128 tokens) at twice the CPU, and
    MiniLM too (840 texts: 16-17 s vs 13.8 s). Set in the worker, as the controller's
    environment is what every worker starts from."""
    workers = getattr(config, "workerinput", {}).get("workercount")
    if workers:
        share = str(max(1, (os.cpu_count() or 1) // int(workers)))
        os.environ.setdefault("ENGRAM_LLM_THREADS", share)
        os.environ.setdefault("ENGRAM_EMBED_THREADS", share)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``, see pyproject.toml) the tests of a module
    that share a module-scoped fixture (a demo replay run, a Ray instance) go to one worker,
    so that fixture is built once as in a serial run; every other test is sent on its own.
    ``tryfirst``: the group must be marked before xdist reads the marks. On a worker the
    collection is then ordered longest first (a serial run keeps pytest's order, in which
    a module's tests stay together around its module fixtures)."""
    for item in items:
        if not item.get_closest_marker("xdist_group") and _module_fixtures(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    if hasattr(config, "workerinput"):
        _longest_first(items)


@pytest.fixture(scope="session", autouse=True)
def engram_home(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Each test process (each xdist worker) its own ``$ENGRAM_HOME``: no test reads the
    developer's settings or caches, and workers never share a data dir. Subprocesses
    inherit it; a test that needs another one still sets its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ENGRAM_HOME", str(tmp_path_factory.mktemp("engram-home")))
        # a pytest a test starts on a toy project (a test run parsed, a project's tests)
        # loads none of engram's dev plugins: hypothesis and textual's snapshots made each
        # such run's start 3.8 instead of 0.6 CPU s. This process has loaded its own.
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        yield


# The markers that say a test needs the real embedded model or the llama.cpp server:
# `make check` deselects them. A test without one that loads the model, or starts the
# server, fails here (its loads are recorded and the test failed at its end: a load in a
# thread, or one a caller catches, is seen all the same). A subprocess a test starts is
# not seen here: `make check` with the weights hidden finds those (README, "Tests").
REAL_MODEL_MARKS = ("slow", "server")


@pytest.fixture(autouse=True)
def real_model_needs_a_mark(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                            ) -> Any:
    if any(request.node.get_closest_marker(mark) for mark in REAL_MODEL_MARKS):
        yield
        return
    from memory.llm.local.model import LocalModel

    loads: list[str] = []

    def guarded(what: str) -> Callable[..., Any]:
        def guard(*args: Any, **kwargs: Any) -> Any:
            loads.append(what)
            raise RuntimeError(f"{what} in a test not marked slow or server")
        return guard

    monkeypatch.setattr(LocalModel, "__init__", guarded("the embedded model loaded"))
    import tests.served

    monkeypatch.setattr(tests.served, "llama_server", guarded("the llama.cpp server started"))
    yield
    if loads:
        pytest.fail(f"{', '.join(sorted(set(loads)))}: mark the test "
                    f"@pytest.mark.{' or '.join(REAL_MODEL_MARKS)} (make check leaves those out)",
                    pytrace=False)


def _register_scripted() -> None:
    import litellm
    from litellm.llms.custom_llm import CustomLLM
    from litellm.utils import custom_llm_setup

    from memory.llm.client import import_litellm

    import_litellm()

    def prompt_tokens(kwargs: dict[str, Any]) -> int:
        if not SCRIPT.count_prompt:
            return 10
        if callable(SCRIPT.count_prompt):
            return int(SCRIPT.count_prompt(kwargs["messages"]))
        return sum(len(str(m.get("content", "")).split()) for m in kwargs["messages"])

    def response(kwargs: dict[str, Any], text: str) -> Any:
        prompt = prompt_tokens(kwargs)
        return litellm.ModelResponse(
            model=kwargs["model"],
            choices=[{"message": {"role": "assistant", "content": text},
                      "finish_reason": "stop", "index": 0}],
            usage={"prompt_tokens": prompt, "completion_tokens": len(text.split()),
                   "total_tokens": prompt + len(text.split())},
        )

    class Scripted(CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> Any:
            return response(kwargs, SCRIPT.reply(kwargs["messages"]))

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            return self.completion(*args, **kwargs)

        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            text = SCRIPT.reply(kwargs["messages"])
            words = text.split(" ")
            step = max(1, SCRIPT.piece_words)
            pieces = [" ".join(words[i:i + step]) for i in range(0, len(words), step)]
            for i, piece in enumerate(pieces):
                yield {"text": piece if i == len(pieces) - 1 else piece + " ",
                       "is_finished": False, "finish_reason": "", "index": 0,
                       "tool_use": None, "usage": None}
            yield {"text": "", "is_finished": True, "finish_reason": "stop", "index": 0,
                   "tool_use": None,
                   "usage": {"prompt_tokens": prompt_tokens(kwargs),
                             "completion_tokens": len(words),
                             "total_tokens": prompt_tokens(kwargs) + len(words)}}

    litellm.custom_provider_map = [
        p for p in litellm.custom_provider_map if p.get("provider") != "scripted"
    ] + [{"provider": "scripted", "custom_handler": Scripted()}]
    custom_llm_setup()


@pytest.fixture
def script() -> Script:
    """The scripted model's replies, reset for each test."""
    _register_scripted()
    SCRIPT.queue.clear()
    SCRIPT.calls.clear()
    SCRIPT.default = "scripted answer"
    SCRIPT.count_prompt = False
    SCRIPT.piece_words = 1
    return SCRIPT


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real bundled MiniLM."""
    from memory.index.embed import get_embedder

    return get_embedder()


class CountingEmbedder:
    """The real embedder, recording every text it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.texts: list[str] = []

    def embed(self, texts: list[str], *, max_tokens: int | None = None) -> Any:
        self.texts.extend(texts)
        return self.inner.embed(texts, max_tokens=max_tokens)


@pytest.fixture
def counting_embedder(embedder: Any) -> CountingEmbedder:
    return CountingEmbedder(embedder)


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           # fixed dates: the same files give the same commit sha (snapshot tests)
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def make_repo(root: Path, files: dict[str, str | bytes], commit: bool = True) -> Path:
    """A real git repository with ``files``, committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
    return root


FORMS = '''"""Forms and their validation."""
import re

EMAIL = re.compile(r"[^@]+@[^@]+")


class Form:
    """A web form with fields."""

    fields = ()

    def __init__(self, data):
        self.data = data

    def validate_input(self, value):
        """Reject an empty value or a malformed email address."""
        if not value:
            raise ValueError("empty")
        return bool(EMAIL.match(value))

    @property
    def size(self):
        return len(self.data)


def render_form(form):
    """Turn a form into an HTML string for the browser."""
    return "<form>" + "".join(form.fields) + "</form>"
'''

DB = '''"""Database helpers."""


def connect(url, timeout=5):
    """Open a connection to the postgres database at the given url."""
    return (url, timeout)


def migrate(conn, steps):
    """Apply schema migrations in order, stopping at the first failure."""
    for step in steps:
        step(conn)
'''

README = """# Demo app

A tiny app used in tests.

## Install

Run pip install.
"""


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "demo", {
        "app/forms.py": FORMS, "app/db.py": DB, "README.md": README,
        "app/__init__.py": "",
    })


@pytest.fixture
def make_agent(tmp_path: Path, embedder: Any, script: Script) -> Callable[..., Any]:
    """An Agent on a real indexed repo, the scripted model, a real transcript file."""
    from memory.backends import BackendEnv, registry
    from memory.index.repo import RepoIndex
    from memory.llm.client import LLM, LLMConfig
    from memory.store import Store
    from memory.transcript import TranscriptWriter
    from memory.turn.agent import Agent, AgentConfig

    indexes: dict[str, Any] = {}

    def build(backend: str = "full", *, model: str = "scripted/test", repo: bool = True,
              max_answer_tokens: int = 64, **llm_options: Any) -> Any:
        index = None
        if repo:
            if "index" not in indexes:
                root = make_repo(tmp_path / "agent-repo", {"app/forms.py": FORMS,
                                                           "app/db.py": DB})
                indexes["index"] = RepoIndex(root, Store(tmp_path / "agent-data"), embedder)
                indexes["index"].refresh()
            index = indexes["index"]
        llm = LLM(LLMConfig(model=model, backoff=0.01, **llm_options))
        env = BackendEnv(llm=llm, embedder=embedder, repo=index, data_dir=tmp_path / "home",
                         session_id="test")
        writer = TranscriptWriter(tmp_path / "sessions" / f"{backend}.jsonl")
        return Agent(registry.create(backend, env), llm, env, writer,
                     config=AgentConfig(max_answer_tokens=max_answer_tokens))

    return build


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """llama-cpp-python's OpenAI-compatible server with the shipped SmolLM2 on a free
    loopback port (one per xdist worker), stopped at the end of the session."""
    from tests.served import llama_server as start

    with start(tmp_path_factory.mktemp("llama-server")) as served:
        yield served
