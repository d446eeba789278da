"""``engram memory ingest``: the sessions a developer had in other tools (and in engram)
fed to a memory backend in the repository's own store, incrementally.

``open_feeder`` assembles what the app assembles (``memory/session.py``: the repository's
index and data dir, the model, the backend's options; memory backends keep one store per
repository), ``sources`` says which files (``auto``: ``memory.sessions.places``), and
``Feeder.feed`` takes each file's new turns (``feed.py``, ``marks.py``). ``watch`` does
it again every ``interval`` seconds until stopped; every turn moves its file's mark, so
stopping at any point loses and repeats nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory import _git
from memory.backends import BackendEnv, registry
from memory.home import repo_home
from memory.ingest.feed import SETTLE, Feeder, FileReport, summary
from memory.ingest.marks import Marks
from memory.llm.client import LLM, LLMConfig, check_model, default_model
from memory.sessions.places import TOOL_NAMES, TOOLS, find

INTERVAL = 2.0  # seconds between two looks at the sessions with --watch


@dataclass(frozen=True)
class IngestOptions:
    repo: Path = Path(".")
    backend: str = "cards"
    tool: str | None = None  # claude | codex | aider | engram; None: every tool (auto) / sniffed
    model: str | None = None
    data_dir: Path | None = None
    settle: float = SETTLE
    backend_options: tuple[tuple[str, object], ...] = ()


def open_feeder(options: IngestOptions) -> Feeder:
    """The repository's index and store, the model and the backend's options, checked
    before anything slow (an unknown backend or tool is a clear error)."""
    registry.spec(options.backend)
    if options.tool is not None and options.tool not in TOOLS:
        raise ValueError(f"--from {options.tool!r}: one of {', '.join(TOOLS)}")
    model = options.model or default_model()
    check_model(model)
    from memory.index.repo import open_index

    index, _ = open_index(options.repo, options.data_dir)
    home = repo_home(index.root, options.data_dir)
    llm = LLM(LLMConfig(model=model))
    given = dict(options.backend_options)
    if options.backend == "cards" and llm.embedded:
        # the embedded model cannot pick facts: every statement is kept as said, no call
        given.setdefault("cards_facts", "said")
    env = BackendEnv(llm=llm, embedder=index.embedder, repo=index, data_dir=home,
                     options={"shared_memory": True, **given})
    return Feeder(options.backend, env, llm, Marks(home), options.settle)


def sources(feeder: Feeder, files: list[Path] | None, tool: str | None
            ) -> list[tuple[Path, str | None]]:
    """The files to read, with the tool that wrote them (None: sniffed): ``files`` as
    given, or (None: ``auto``) every session of the repository the tools keep."""
    if files:
        return [(Path(f), TOOL_NAMES[tool] if tool else None) for f in files]
    root = feeder.env.repo.root if feeder.env.repo is not None else Path(".")
    home = feeder.env.data_dir or Path(".")
    return list(find(root, home, (tool,) if tool else TOOLS))


async def ingest(feeder: Feeder, files: list[Path] | None, tool: str | None = None
                 ) -> list[FileReport]:
    return [await feeder.feed(path, which) for path, which in sources(feeder, files, tool)]


async def watch(feeder: Feeder, files: list[Path] | None, tool: str | None = None, *,
                interval: float = INTERVAL, stop: asyncio.Event | None = None,
                report: Callable[[FileReport], None] | None = None) -> int:
    """Ingest again every ``interval`` seconds (``auto`` looks for new session files each
    time) until ``stop`` is set or the task is cancelled; the turns taken."""
    stop = stop or asyncio.Event()
    feeder.stopping = stop
    taken = 0
    while not stop.is_set():
        for done in await ingest(feeder, files, tool):
            taken += done.turns
            if report is not None and (done.turns or done.error):
                report(done)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
    return taken


def repo_root(path: Path) -> Path:
    return _git.toplevel(Path(path).expanduser())


__all__ = ["Feeder", "FileReport", "IngestOptions", "ingest", "open_feeder", "sources",
           "summary", "watch"]
