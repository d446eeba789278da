"""``engram mcp``: a real MCP client (the SDK's stdio client) against the server started as
a subprocess, on a real git repository, the real MiniLM and a real LanceDB store; the app's
store and the server's are one; ``engram recall --brief`` as Claude Code's hook runs it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.conftest import git, make_repo

ROOT = Path(__file__).resolve().parents[2]
A_PY = '''def f(items):
    """How many items there are."""
    return len(items)


def g(items):
    return [i for i in items if i]
'''


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@asynccontextmanager
async def served(repo: Path, data: Path, backend: str = "cards"):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tui.cli", "mcp", str(repo), "--data-dir", str(data),
                                      "--backend", backend],
        env=_env(), cwd=str(ROOT))
    with tempfile.TemporaryFile("w+") as errlog:  # the server's stderr (capsys has no fd)
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session, tool: str, **arguments):
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text
    return result.is_error, (text if result.is_error else json.loads(text))


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.py": A_PY, "README.md": "a tiny repo\n",
                                         "AGENTS.md": "Run the tests with `pytest -q`.\n"})


async def test_the_server_remembers_recalls_and_reports_freshness(repo, tmp_path):
    first = git(repo, "rev-parse", "HEAD").strip()
    async with served(repo, tmp_path / "data") as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools == {"recall", "remember", "forget", "pin", "unpin", "memories", "explain"}

        bad, kept = await call(session, "remember",
                               text="f must return the count as an int, never None.",
                               about="a.py::f")
        assert not bad, kept
        assert kept["locations"][0] == "a.py::f" and kept["freshness"] == "fresh"
        bad, found = await call(session, "recall", query="what does f return?", limit=3)
        assert not bad and found[0]["id"] == kept["id"] and found[0]["freshness"] == "fresh"

        (repo / "a.py").write_text(A_PY.replace("return len(items)", "return len(items) or 0"))
        commit_all(repo, "f: zero")
        bad, found = await call(session, "recall", query="what does f return?", limit=3)
        assert found[0]["freshness"] == "changed", found[0]
        assert found[0]["note"].startswith(f"changed since {first[:8]}"), found[0]

        (repo / "a.py").write_text(A_PY.split("def g")[0].replace("def f", "def h"))
        commit_all(repo, "f is gone")
        bad, found = await call(session, "recall", query="what does f return?", limit=3)
        assert found[0]["freshness"] == "gone" and "gone since" in found[0]["note"], found[0]

        _, other = await call(session, "remember", text="The README stays one line long.")
        bad, pinned = await call(session, "pin", id=other["id"])
        assert not bad and pinned["pinned"]["pinned"]
        _, found = await call(session, "recall", query="what does f return?", limit=3)
        assert found[0]["id"] == other["id"]  # pinned first
        resource = await session.read_resource("engram://memories/pinned")
        assert "The README stays one line long." in resource.contents[0].text
        resource = await session.read_resource("engram://instructions")
        assert "Run the tests with `pytest -q`." in resource.contents[0].text
        (repo / "AGENTS.md").write_text("Run the tests with `make test`.\n")
        resource = await session.read_resource("engram://instructions")  # read again
        assert "`make test`" in resource.contents[0].text
        _, explained = await call(session, "explain", id=kept["id"])
        assert explained["source"] == "remembered through the MCP server"
        assert explained["kept_at_commit"] == first

        bad, _ = await call(session, "forget", id=kept["id"])
        assert not bad
        _, listed = await call(session, "memories")
        assert [m["id"] for m in listed] == [other["id"]]

        for tool, arguments, reason in [
            ("forget", {"id": "0123456789ab"}, "no memory"),
            ("forget", {"id": kept["id"]}, "forgotten already"),
            ("remember", {"text": "   "}, "empty"),
            ("remember", {"text": "x" * 5000}, "at most 4000"),
            ("remember", {"text": "f is fine", "about": "../../etc/passwd"}, "outside"),
            ("remember", {"text": "f is fine", "about": "/etc/passwd"}, "outside"),
            ("recall", {"query": ""}, "empty"),
            ("recall", {"query": "f", "limit": 0}, "limit"),
            ("explain", {"id": ""}, "no memory id"),
        ]:
            bad, text = await call(session, tool, **arguments)
            assert bad and reason in text, (tool, arguments, text)
            bad, _ = await call(session, "memories", filter="readme")
            assert not bad  # the next call still works

        data = tmp_path / "data"
        manifests = list(data.rglob("cards_kept.lance/_versions/*.manifest"))
        assert manifests
        for manifest in manifests:
            manifest.write_bytes(b"not a manifest")
        bad, text = await call(session, "pin", id=other["id"])  # a write reads the table
        assert bad and "memory store" in text, text
        for snapshot in data.rglob("cards_kept.snapshot.npz"):
            snapshot.unlink()  # the readers' cache gone, a read meets the table too
        bad, text = await call(session, "memories")
        assert bad and "memory store" in text, text
        assert {t.name for t in (await session.list_tools()).tools} == tools  # still serving


async def test_the_apps_store_and_the_servers_are_one(repo, tmp_path, script, monkeypatch,
                                                      capsys):
    from memory.session import SessionOptions, open_session
    from tui.cli import main

    data = tmp_path / "data"
    said = "`g` must keep the falsy items out of its result."
    monkeypatch.setattr(sys, "stdin", iter([f"{said}\n"]))
    assert await asyncio.to_thread(main, [
        "chat", "--headless", "--repo", str(repo), "--model", "scripted/t", "--backend",
        "cards", "--shared-memory", "--backend-opt", "cards_facts=said", "--data-dir",
        str(data)]) == 0
    capsys.readouterr()
    async with served(repo, data) as session:
        _, found = await call(session, "recall", query="what does g keep?", limit=3)
        assert found[0]["text"] == said and found[0]["source"] == "chat", found
        assert "a.py::g" in found[0]["locations"]
        _, explained = await call(session, "explain", id=found[0]["id"])
        assert explained["turn"] == 0 and said in explained["said"]
        bad, kept = await call(session, "remember",
                               text="f counts items; it never filters them.", about="f")
        assert not bad, kept

    chat = open_session(SessionOptions(repo=repo, backend="cards", model="scripted/t",
                                       data_dir=data, shared_memory=True, record=False))
    pack = await chat.agent.backend.context("does f filter the items?", budget=2000)
    assert any("f counts items" in s.text for s in pack.sections), pack.sections
    items = {m.text for m in chat.agent.backend.memory_items()}
    assert {said, "f counts items; it never filters them."} <= items
    capsys.readouterr()
    assert main(["memories", "--repo", str(repo), "--backend", "cards", "--shared-memory",
                 "--data-dir", str(data)]) == 0
    listing = capsys.readouterr().out
    assert "2 kept facts" in listing and said in listing and "[a.py::g]" in listing


async def test_mem0s_repository_store_is_served_and_shared_with_the_app(repo, tmp_path,
                                                                        script, monkeypatch):
    """mem0 keeps memories per repository (shared memory): the server recalls one the app
    made, the app's session reads one remembered through the server; mem0 has no pins."""
    from memory.session import SessionOptions, open_session

    data = tmp_path / "data"
    app = open_session(SessionOptions(repo=repo, backend="mem0", model="scripted/t",
                                      data_dir=data, shared_memory=True, record=False))
    said = "g drops the falsy items; keep it that way."
    vector = app.agent.backend.env.embedder.embed([said])[0]
    app.agent.backend.memories.add(said, ["a.py::g"], vector, 0)
    async with served(repo, data, "mem0") as session:
        _, found = await call(session, "recall", query="what does g drop?", limit=3)
        assert found[0]["text"] == said and found[0]["locations"] == ["a.py::g"], found
        assert found[0]["freshness"] == "unanchored"
        bad, kept = await call(session, "remember", text="f counts the items.",
                               about="a.py::f")
        assert not bad and kept["locations"] == ["a.py::f"], kept
        _, listed = await call(session, "memories")
        assert {m["text"] for m in listed} == {said, "f counts the items."}
        _, explained = await call(session, "explain", id=kept["id"])
        assert [e["op"] for e in explained["history"]] == ["ADD"], explained
        for tool, arguments, reason in [
            ("pin", {"id": kept["id"]}, "keeps no pins"),
            ("remember", {"text": "f is fine", "about": "../../etc/passwd"}, "outside"),
            ("forget", {"id": "0123456789ab"}, "no memory"),
            ("recall", {"query": "f", "limit": "many"}, "whole number"),
            ("recall", {"question": "f"}, "recall takes query, limit"),
        ]:
            bad, text = await call(session, tool, **arguments)
            assert bad and reason in text, (tool, arguments, text)
        bad, _ = await call(session, "forget", id=found[0]["id"])
        assert not bad
        _, listed = await call(session, "memories")
        assert [m["text"] for m in listed] == ["f counts the items."]

    again = open_session(SessionOptions(repo=repo, backend="mem0", model="scripted/t",
                                        data_dir=data, shared_memory=True, record=False))
    assert [m.text for m in again.agent.backend.memory_items()] == ["f counts the items."]


def test_a_backend_without_kept_memory_is_refused_at_start(repo, tmp_path):
    done = subprocess.run([sys.executable, "-m", "tui.cli", "mcp", str(repo), "--backend",
                           "full", "--data-dir", str(tmp_path / "data")], input="",
                          text=True, capture_output=True, env=_env(), cwd=str(ROOT),
                          timeout=120)
    assert done.returncode != 0 and "'full' keeps no memory across sessions" in done.stderr
    assert "cards, mem0, mem0r" in done.stderr and not done.stdout


def test_recall_brief_reads_the_hook_input_and_imports_no_model(repo, tmp_path, script,
                                                                monkeypatch):
    """The hook's process imports no model library, nor LanceDB while the readers'
    snapshot of the kept facts is current (the last write left it)."""
    data = tmp_path / "data"
    monkeypatch.setenv("ENGRAM_MODEL", "scripted/t")  # the writing session's model
    from memory.recall.keeper import Keeper

    keeper = Keeper(repo, data)
    import asyncio

    memory = asyncio.run(keeper.remember("g must keep the falsy items out.", about="a.py::g"))
    keeper.pin(memory.id)
    hook = json.dumps({"prompt": "change g", "session_id": "x", "hook_event_name":
                       "UserPromptSubmit"})
    code = ("import sys; from tui.cli import main; rc = main(sys.argv[1:]); "
            "heavy = [m for m in ('torch', 'litellm', 'lancedb') if m in sys.modules]; "
            "assert not heavy, heavy; raise SystemExit(rc)")
    done = subprocess.run([sys.executable, "-c", code, "recall", "-", "--brief", "--repo",
                           str(repo), "--data-dir", str(data)], input=hook, text=True,
                          capture_output=True, env=_env(), cwd=str(ROOT), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "g must keep the falsy items out. [a.py::g]" in done.stdout
    assert "Run the tests with `pytest -q`." in done.stdout  # the instructions that apply
    empty = subprocess.run([sys.executable, "-m", "tui.cli", "recall", "-", "--brief",
                            "--repo", str(repo), "--data-dir", str(data)],
                           input=json.dumps({"prompt": ""}), text=True, capture_output=True,
                           env=_env(), cwd=str(ROOT), timeout=120)
    assert empty.returncode == 0 and empty.stdout == ""


def test_the_writing_session_opens_warm(repo, tmp_path, script, monkeypatch):
    """The writing session (opened in the background after the server's first answer)
    loads what ``cards``' first ``note`` compares a statement with before ``remember``
    is served, so the first remember does not load them; a remember after it keeps as
    before."""
    monkeypatch.setenv("ENGRAM_MODEL", "scripted/t")
    from memory.recall.keeper import Keeper

    keeper = Keeper(repo, tmp_path / "data")
    keeper.start()
    assert keeper._opened.wait(120) and keeper._session is not None
    backend = keeper._session.agent.backend
    assert backend.builder.reader._prototypes is not None
    assert backend.builder.reviser._prototypes is not None
    import asyncio

    kept = asyncio.run(keeper.remember("g must keep the falsy items out.", about="a.py::g"))
    assert kept.locations == ["a.py::g"] and kept.freshness == "fresh"
