"""The turns of a session file fed to a memory backend, from where the last run stopped.

Each session file becomes an engram session of its own in the repository's data dir
(``sessions/<id>.jsonl``, the store the app and the MCP server read; its session record
says ``ingested``: the tool, the file, the tool's session id). Its new turns are
committed there through an ``Agent`` as the app commits its own: the ``turn`` record
first, then the backend observes it and its ``memory`` records follow. A backend that
keeps its memory in the process (cards, rag, ...) is caught up on the session's earlier
turns first (read back from that transcript, nothing written again); a persistent one
(mem0 with its repository store) already holds them.

A turn is taken once it is closed (the next turn began, or the tool marked its end) or
the file has been left alone for ``settle`` seconds; the last line of a file still being
written is left for the next run. After each turn the file's mark moves past it
(``marks.py``). The turn record and the mark are one unit through the transcript: a turn
recorded there after the ones its mark counts (its memory update failed, or the process
died before the mark moved) is taken up again from the transcript when its turn comes,
observed and not recorded a second time; so an interrupted run loses nothing and records
nothing twice. (Observing it again is what an in-process backend does on every catch-up;
``cards`` keeps a fact once per session and node; mem0's update step finds the fact
already there.) An error of the backend stops only its file (reported, its mark before
the failing turn); the other files go on.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.backends import BackendEnv, registry
from memory.ingest.marks import HEAD_BYTES, Mark, Marks, identity, same_file
from memory.llm.client import LLM
from memory.redact import redact
from memory.sessions import READERS, ForeignError, Session, sniff
from memory.sessions.engram import read_engram
from memory.transcript import TranscriptWriter, read_transcript, sessions_dir
from memory.turn.agent import Agent, AgentConfig
from memory.types import Turn

SETTLE = 600.0  # seconds without a write after which a session's last turn is taken
MAX_CALLS = 100  # of one turn's tool calls fed to the backend (the newest)
RESULT_TAIL = 4000  # characters of each call's result (its end)


@dataclass
class FileReport:
    path: Path
    tool: str
    turns: int = 0  # taken in this run
    session: str = ""  # the engram session they went to
    waiting: int = 0  # turns not closed yet (taken on a later run)
    skipped: int = 0  # records the reader skipped
    error: str = ""


@dataclass
class Feeder:
    """One backend fed from one repository's sessions (``env``: its data dir, index, LLM)."""

    backend: str
    env: BackendEnv
    llm: LLM
    marks: Marks
    settle: float = SETTLE
    agents: dict[str, Agent] = field(default_factory=dict)  # engram session -> live agent
    # engram session -> {the tool's turn number: its turn, recorded but not marked}
    pending: dict[str, dict[int, Turn]] = field(default_factory=dict)
    stopping: Any = None  # an asyncio.Event: set, no further turn is begun (--watch, Ctrl-C)

    def tool_of(self, path: Path, tool: str | None) -> str:
        found = tool or sniff(path)
        if found is None and path.suffix == ".jsonl":
            return "engram"  # engram's own transcript (sniff says None for it)
        if found is None:
            raise ForeignError(f"{path}: not a session of Claude Code, Codex, Aider or "
                               "engram (pass --from to say which)")
        return found

    def read(self, path: Path, tool: str) -> Session:
        reader = read_engram if tool == "engram" else READERS[tool]
        return reader(path, complete_only=True)

    async def feed(self, path: Path, tool: str | None = None) -> FileReport:
        """Take the new closed turns of ``path`` (``tool``: which wrote it; None: sniffed),
        under the repository's ingest lock."""
        with self.marks.locked():
            return await self._feed(Path(path), tool)

    async def _feed(self, path: Path, tool: str | None) -> FileReport:
        report = FileReport(path, tool or "")
        try:
            report.tool = tool = self.tool_of(path, tool)
            session = self.read(path, tool)
        except (ForeignError, OSError) as exc:
            report.error = str(exc)
            return report
        report.skipped = session.skipped
        mark = self.marks.get(self.backend, path)
        if mark is not None and not same_file(mark, path):
            mark = None  # replaced or rewritten: a new file, a new engram session
        offset = mark.offset if mark is not None else 0
        settled = time.time() - path.stat().st_mtime >= self.settle
        todo = [n for n, start in enumerate(session.starts) if start >= offset]
        ready = []
        for n in todo:
            if not (session.closed[n] or settled):
                break
            ready.append(n)
        report.waiting = len(todo) - len(ready)
        if not ready:
            report.session = mark.session if mark is not None else ""
            return report
        if mark is None:
            mark = self._new_mark(path, tool, session)
        report.session = mark.session
        try:
            agent = await self._agent(mark, path, tool, session)
        except Exception as exc:  # the backend's: this file is reported, the others go on
            report.error = _failed(self.backend, "", exc)
            return report
        for n in ready:
            if self.stopping is not None and self.stopping.is_set():
                break
            pending = self.pending.get(mark.session, {}).pop(n, None)
            turn = pending or self._turn(agent, session, n, path)
            try:
                await agent.commit(turn, recorded=pending is not None)
            except Exception as exc:  # its mark stays before this turn: taken again next run
                report.error = _failed(self.backend, f"turn {n + 1}: ", exc)
                self._drop(mark.session)
                break
            end = session.starts[n + 1] if n + 1 < len(session.starts) else session.consumed
            mark.offset, mark.turns = end, mark.turns + 1
            mark.head = min(HEAD_BYTES, end)
            mark.identity = identity(path, mark.head)
            self.marks.put(mark)
            report.turns += 1
        return report

    def _new_mark(self, path: Path, tool: str, session: Session) -> Mark:
        stat = path.stat()
        who = hashlib.sha1(f"{path.resolve()}:{stat.st_dev}:{stat.st_ino}".encode()
                           ).hexdigest()[:8]
        name = "".join(c if c.isalnum() or c in "-_." else "-" for c in session.id)[:60]
        session_id = f"ingest-{tool}-{name.strip('-.') or 'session'}-{self.backend}-{who}"
        return Mark(str(path.resolve()), tool, self.backend, identity(path, 0), 0, 0,
                    session_id)

    async def _agent(self, mark: Mark, path: Path, tool: str, session: Session) -> Agent:
        """The agent of ``mark``'s engram session: live from an earlier file of this run
        (``--watch``), else its backend caught up on the transcript's turns."""
        live = self.agents.pop(mark.session, None)
        if live is not None and len(live.turns) == mark.turns:
            self.agents[mark.session] = live
            return live
        if live is not None and live.transcript is not None:  # another ingest added turns
            live.transcript.close()
        transcript = sessions_dir(self.env.data_dir or Path(".")) / f"{mark.session}.jsonl"
        started = transcript.is_file() and transcript.stat().st_size > 0
        # the turns the mark counts; a turn recorded after them is one whose memory update
        # failed or was cut off (a crash before its mark moved): it is observed again when
        # its turn comes, not recorded again (``pending``)
        recorded = read_transcript(transcript).turns if started else []
        earlier = recorded[:mark.turns]
        self.pending[mark.session] = {
            int(t.meta["ingested"]["turn"]): t for t in recorded[mark.turns:]
            if isinstance(t.meta.get("ingested"), dict)
            and t.meta["ingested"].get("file") == str(path.resolve())}
        env = BackendEnv(llm=self.llm, embedder=self.env.embedder, repo=self.env.repo,
                         data_dir=self.env.data_dir, session_id=mark.session,
                         repo_k=self.env.repo_k, options=dict(self.env.options))
        agent = Agent(registry.create(self.backend, env), self.llm, env, None,
                      config=AgentConfig())
        await agent.resume(earlier)  # nothing recorded while catching up
        agent.transcript = TranscriptWriter(transcript)
        if not started:
            agent.record({"type": "session", "id": mark.session,
                          "repo": str(self.env.repo.root) if self.env.repo else session.repo,
                          "engram": _version(), "model": self.llm.model,
                          "backend": self.backend, "started": time.time(),
                          "ingested": {"tool": tool, "file": str(path.resolve()),
                                       "session": session.id, "version": session.version}})
        self.agents[mark.session] = agent
        return agent

    def _turn(self, agent: Agent, session: Session, n: int, path: Path) -> Turn:
        now = time.time()
        meta: dict[str, Any] = {"ingested": {"tool": session.tool, "session": session.id,
                                             "turn": n, "file": str(path.resolve())}}
        calls = tool_events(session, n)
        if calls:
            meta["tools"] = {"calls": calls, "steps": len(calls)}
        return Turn(index=len(agent.turns), user=redact(session.queries[n]),
                    assistant=redact(session.answer(n)), backend=self.backend,
                    model=f"{session.tool} {session.version}".strip(), started=now,
                    finished=now, meta=meta)

    def _drop(self, session: str) -> None:
        """Forget a live agent whose commit failed (rebuilt from the transcript next time)."""
        agent = self.agents.pop(session, None)
        if agent is not None and agent.transcript is not None:
            agent.transcript.close()

    def close(self) -> None:
        for agent in self.agents.values():
            if agent.transcript is not None:
                agent.transcript.close()
        self.agents.clear()


def tool_events(session: Session, n: int) -> list[dict[str, Any]]:
    """The tool calls of the tool's turn ``n`` as engram's own turns record theirs
    (``turn.meta["tools"]["calls"]``: function, args, ok, result), which the backends that
    read calls take as they take engram's: ``cards`` makes test outcomes of a shell call's
    output (Claude Code's Bash, Codex's shell: any call with a ``command``), ``mask`` and
    ``compact`` mask or summarise past outputs. The newest ``MAX_CALLS`` of a turn are kept,
    each result's last ``RESULT_TAIL`` characters (a test runner's summary is at its end),
    so a long agentic turn stays one transcript line of bounded size."""
    calls = [c for c in session.calls if c.query == n][-MAX_CALLS:]
    return [{"function": c.tool,
             "args": c.input if isinstance(c.input, dict) else {"input": c.input},
             "ok": c.ok, "result": (c.result or "")[-RESULT_TAIL:]} for c in calls]


def _failed(backend: str, where: str, exc: Exception) -> str:
    return (f"{where}memory backend {backend} failed ({type(exc).__name__}: "
            f"{redact(str(exc))[:300]}); this file is taken again from there next run")


def _version() -> str:
    from memory import __version__

    return __version__


def summary(reports: list[FileReport]) -> dict[str, Any]:
    return {"files": len(reports), "turns": sum(r.turns for r in reports),
            "waiting": sum(r.waiting for r in reports),
            "errors": [r.error for r in reports if r.error]}
