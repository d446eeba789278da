"""Open a working session on a repository: index, model, backend, transcript, agent.

The one place front-ends assemble the engine's parts: ``session_llm`` makes the model
(with the front-end's settings), ``build_agent`` the backend's environment, the
backend and the agent; ``open_session`` does both for headless chat/ask, the app
(tui/session.py) and replay (replay/core/runner.py) call them with their own parts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory import __version__, _git
from memory.backends import BackendEnv, Registry, registry
from memory.home import repo_home
from memory.index.embed import MINILM, Embedder, LazyEmbedder
from memory.index.repo import IndexReport, Progress, RepoIndex, open_index
from memory.llm.client import DEFAULT_TIMEOUT, LLM, LLMConfig, check_model, default_model
from memory.settings import Settings, current
from memory.transcript import TranscriptWriter, new_session_id, sessions_dir
from memory.turn.agent import Agent, AgentConfig


@dataclass(frozen=True)
class SessionOptions:
    repo: Path = Path(".")
    backend: str = "full"
    model: str | None = None
    data_dir: Path | None = None
    embed_model: str = MINILM
    max_tokens: int = 512
    timeout: float = DEFAULT_TIMEOUT  # seconds per LLM call (per try)
    record: bool = True
    shared_memory: bool = False  # memory backends: one store per repository, not per session
    preload: bool = False  # start loading an embedded model at once (an answer is coming)
    backend_options: tuple[tuple[str, object], ...] = ()  # hyperparameters (backends/options)
    settings: Settings | None = None  # the front-end's (memory.settings); None: current()


@dataclass
class Session:
    agent: Agent
    session_id: str
    home: Path
    report: IndexReport
    transcript_path: Path | None


def open_session(options: SessionOptions, progress: Progress | None = None) -> Session:
    """Validate the options (clear errors first, before anything slow), then assemble."""
    registry.spec(options.backend)  # UnknownBackend lists the known names
    settings = options.settings or current()
    model = options.model or default_model(settings)
    check_model(model, settings=settings)
    if options.preload:
        from memory.llm.local import preload

        preload(model)  # the embedded model loads while the index opens
    index, report = open_index(options.repo, options.data_dir, options.embed_model, progress)
    home = repo_home(index.root, options.data_dir)
    session_id = new_session_id()
    llm = session_llm(model, settings, max_tokens=options.max_tokens, timeout=options.timeout)
    path = sessions_dir(home) / f"{session_id}.jsonl" if options.record else None
    agent = build_agent(options.backend, llm, data_dir=home, session_id=session_id,
                        embedder=index.embedder, repo=index, transcript=path,
                        options={"shared_memory": options.shared_memory,
                                 **dict(options.backend_options)},
                        config=AgentConfig(max_answer_tokens=options.max_tokens))
    agent.start_session(session_id, __version__, _git.head(index.root))
    return Session(agent, session_id, home, report, path)


def session_llm(model: str, settings: Settings, *, max_tokens: int = 512,
                timeout: float = DEFAULT_TIMEOUT) -> LLM:
    """The model of a session, routed by the front-end's settings (check ``model`` first:
    ``check_model`` says plainly what is wrong with it)."""
    return LLM(LLMConfig(model=model, max_tokens=max_tokens, timeout=timeout,
                         settings=settings))


def build_agent(backend: str | Callable[[BackendEnv], Any], llm: LLM, *, data_dir: Path,
                session_id: str, embedder: Embedder | None = None,
                repo: RepoIndex | None = None, store_uri: str = "",
                options: Mapping[str, object] | None = None, transcript: Path | None = None,
                config: AgentConfig | None = None, backends: Registry = registry) -> Agent:
    """The backend's environment, the backend (a registered name, or a maker given the
    environment: replay's benchmark backends) and the agent answering with ``llm``,
    recording to ``transcript`` (None: nothing recorded). The session is not started:
    the caller starts or resumes it."""
    env = BackendEnv(llm=llm, embedder=embedder if embedder is not None else LazyEmbedder(),
                     repo=repo, data_dir=data_dir, store_uri=store_uri,
                     session_id=session_id, options=dict(options or {}))
    made = backend(env) if callable(backend) else backends.create(backend, env)
    writer = TranscriptWriter(transcript) if transcript is not None else None
    return Agent(made, llm, env, writer, config=config or AgentConfig())
