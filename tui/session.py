"""The app's engine-side steps: open a session (new or resumed), index, model checks,
export. Everything here runs on the engine loop or its threads, never the UI's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory import __version__, _git
from memory._checks import valid_session_id
from memory.backends import registry
from memory.home import repo_home
from memory.index.repo import IndexReport, Progress, RepoIndex, open_index
from memory.llm.client import (
    LLM,
    LLMError,
    check_model,
    default_model,
    import_litellm,
    route_of,
)
from memory.session import build_agent, session_llm
from memory.settings import current
from memory.transcript import (
    new_session_id,
    read_transcript,
    resume_from,
    sessions_dir,
)
from memory.turn.agent import Agent, AgentConfig
from memory.turn.steering import user_ops
from memory.types import Turn


@dataclass
class Booted:
    agent: Agent
    home: Path
    session_id: str
    branch: str
    head: str


def repo_root(path: Path) -> Path:
    return _git.toplevel(Path(path).expanduser())


async def open_app_session(options: Any, transcript: Path | None = None) -> Booted:
    """A new session, or the recorded one at ``transcript`` continued (its file appended)."""
    import asyncio

    root = await asyncio.to_thread(repo_root, options.repo)
    home = repo_home(root, options.data_dir)
    turns: list[Turn] = []
    backend = options.backend
    model = options.model
    session_id = new_session_id()
    if transcript is not None:
        resumed = resume_from(transcript)
        session_id, turns = resumed.session_id, resumed.turns
        backend = resumed.backend or backend
        model = model or resumed.model
    registry.spec(backend)
    settings = getattr(options, "settings", None) or current()
    model = model or default_model(settings)
    await asyncio.to_thread(check_model, model, None, settings)
    llm = session_llm(model, settings, max_tokens=options.max_tokens, timeout=options.timeout)
    path = transcript or sessions_dir(home) / f"{session_id}.jsonl"
    agent = build_agent(backend, llm, data_dir=home, session_id=session_id,
                        transcript=path,  # the index joins when built (build_index)
                        options=getattr(options, "backend_options", {}) or {},
                        config=AgentConfig(max_answer_tokens=options.max_tokens))
    if turns:  # with the developer's pins, forgets and edits (memory/turn/steering.py)
        await agent.resume(turns, user_ops(read_transcript(transcript).of_type("memory")))
    else:
        agent.start_session(session_id, __version__, _git.head(root), repo=str(root))
    return Booted(agent, home, session_id, _git.branch(root), _git.head(root))


def build_index(options: Any, progress: Progress | None = None) -> tuple[RepoIndex, IndexReport]:
    """Open and refresh the repository index (blocking; run it in a thread). Needs no
    session, so the app builds it while the session opens: memory/session.py's
    ``open_index``, as ``engram index``, headless chat/ask and ingest open it."""
    index, report = open_index(options.repo, options.data_dir, progress=progress)
    index.warm()  # read the catalog and load the embedder now, not at the first query
    return index, report


def usable_llm(current: LLM, model: str) -> LLM:
    """``current``'s settings with another model, or ValueError saying why not."""
    try:
        check_model(model)
    except LLMError as exc:
        raise ValueError(str(exc)) from exc
    if not model.startswith("local/") and not route_of(model).served:  # a server: any key
        litellm = import_litellm()
        try:
            env = litellm.validate_environment(model=model)
        except Exception:
            env = {"keys_in_environment": True}
        if not env.get("keys_in_environment", True):
            missing = ", ".join(env.get("missing_keys") or []) or "an API key"
            raise ValueError(f"{model} needs {missing} in the environment")
    return current.with_model(model)


def export_path(home: Path | None, session_id: str) -> Path:
    """Where ``/export`` writes by default: ``sessions/<id>.md`` in the data dir; ValueError
    when the id could lead anywhere else."""
    if home is None:
        raise ValueError("no data dir yet: give /export a path")
    if not valid_session_id(session_id):
        raise ValueError(f"session id {session_id[:80]!r} is not a file name; "
                         "give /export a path")
    folder = sessions_dir(home).resolve()
    path = (folder / f"{session_id}.md").resolve()
    if path.parent != folder:
        raise ValueError(f"{path} is outside {folder}; give /export a path")
    return path


def export_markdown(turns: list[Turn], path: Path) -> None:
    lines = ["# engram conversation", ""]
    for turn in turns:
        ab = turn.meta.get("ab")
        if isinstance(ab, dict):  # both answers, and which one was kept
            lines += [f"## Turn {turn.index} · A/B {' vs '.join(ab['backends'])} · {turn.model}",
                      "", f"**You:** {turn.user}", ""]
            for i, (backend, answer) in enumerate(zip(ab["backends"], ab["answers"],
                                                      strict=False)):
                kept = " (kept)" if i == ab.get("choice") else ""
                lines += [f"### {'AB'[i]} · {backend}{kept}", "", answer or "_(no answer)_", ""]
            continue
        lines += [f"## Turn {turn.index} · {turn.backend} · {turn.model}", "",
                  f"**You:** {turn.user}", "", turn.assistant or "_(no answer)_", ""]
        if turn.error:
            lines += [f"> error: {turn.error}", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
