"""``engram mcp [PATH]``: the repository's kept memory as an MCP server over stdio.

A thin front-end over ``memory.recall.keeper.Keeper`` (the engine the app's ``cards`` sessions
share with shared memory): each tool validates its input at the edge and answers a
``KeeperError`` as an error result with the reason, so one bad call never stops the
server. The tools' descriptions are written for the model that calls them.
"""

from __future__ import annotations

import inspect
import json
import threading
from pathlib import Path
from typing import Any

INSTRUCTIONS = """engram keeps this repository's facts and decisions (from the developer's \
engram sessions and from what you remember here), each tied to the code it is about and \
checked against the working tree when you recall it. Call `recall` before you change or \
explain code the developer may have decided something about; call `remember` when the \
developer states a decision, a requirement or a convention that a later session must \
respect. A memory marked changed or gone describes code that is no longer as it was: \
check the code before relying on it."""

RECALL = """Recall what is known about this repository that bears on a task: decisions, \
requirements, conventions and facts the developer stated in earlier sessions or asked to \
remember. Call it before changing or explaining code, and whenever the developer refers to \
something decided earlier. `query`: what you are about to do or the question, in plain \
words, naming the functions or files involved. Returns the most relevant memories, pinned \
ones first, each with its id, the code locations it cites and its freshness read now: \
`fresh` (its code is as it was), `changed since <commit>` or `gone since <commit>` (the \
code it describes changed or was removed: verify before relying on it)."""

REMEMBER = """Keep one fact or decision for every later session of this repository: a \
requirement, a decision and its reason, a convention, a constraint ("`parse_price` must \
return cents as an int"), not a summary of the conversation or something the code already \
says. One fact per call, in the developer's words. `about`: the code it concerns \
(`path/to/file.py`, `path/to/file.py::Class.method` or a function name), else the code the \
text names is used. A new fact about the same code replaces the one it contradicts. \
Returns the memory with its id."""

FORGET = """Forget a memory for good (its id from `recall` or `memories`): use it when the \
developer says a memory is wrong or no longer wanted. A fact that merely changed is better \
remembered anew (the new one supersedes the old)."""

PIN = """Pin a memory (its id): a pinned memory comes first in every `recall`, in the \
pinned-memories resource and in the per-prompt brief. Pin what the developer wants \
respected always."""

UNPIN = "Unpin a pinned memory (its id): it is recalled by relevance again."

MEMORIES = """List the current memories, oldest first. `filter`: only those whose text, \
subject or location contains it; `pinned` for the pinned ones; `stale` for those whose \
code changed or is gone since they were kept."""

EXPLAIN = """Where a memory came from and what became of it (its id): the session and turn \
it was said in (with the developer's words when that session is recorded), whether it was \
remembered through this server, the commit it was kept at, what it superseded and what \
superseded it."""


def _answer(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1)


def build_server(keeper: Any) -> Any:
    """The MCP server of ``keeper``: its tools and resources."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from memory import __version__
    from memory.recall.keeper import KeeperError
    from memory.redact import redact

    server: Any = MCPServer("engram", instructions=INSTRUCTIONS, version=__version__,
                            log_level="WARNING")

    async def attempt(make: Any) -> str:
        """``make()``'s answer as JSON; a refusal or a failure as an error result."""
        try:
            result = make()
            if inspect.isawaitable(result):
                result = await result
            keeper.start()  # the writing session opens after the first answer, not before
            return _answer(result)
        except KeeperError as exc:
            raise ToolError(redact(str(exc))) from exc
        except Exception as exc:  # the store, the repository, a library: said, not raised
            raise ToolError(redact(f"engram could not do that: {type(exc).__name__}: "
                                   f"{exc}")) from exc

    @server.tool(description=RECALL)
    async def recall(query: str, limit: int = 5) -> str:
        return await attempt(lambda: [m.as_dict() for m in keeper.recall(query, limit)])

    @server.tool(description=REMEMBER)
    async def remember(text: str, about: str = "") -> str:
        async def run() -> dict[str, Any]:
            return (await keeper.remember(text, about)).as_dict()
        return await attempt(run)

    @server.tool(description=FORGET)
    async def forget(id: str) -> str:
        return await attempt(lambda: {"forgotten": keeper.forget(id).as_dict()})

    @server.tool(description=PIN)
    async def pin(id: str) -> str:
        return await attempt(lambda: {"pinned": keeper.pin(id, True).as_dict()})

    @server.tool(description=UNPIN)
    async def unpin(id: str) -> str:
        return await attempt(lambda: {"unpinned": keeper.pin(id, False).as_dict()})

    @server.tool(description=MEMORIES)
    async def memories(filter: str = "") -> str:
        return await attempt(lambda: [m.as_dict() for m in keeper.memories(filter)])

    @server.tool(description=EXPLAIN)
    async def explain(id: str) -> str:
        return await attempt(lambda: keeper.explain(id))

    @server.resource("engram://memories/pinned", name="pinned memories",
                     description="The memories pinned for this repository, one a line, "
                                 "with the code they cite and their freshness.",
                     mime_type="text/markdown")
    def pinned_memories() -> str:
        try:
            pinned = keeper.pinned()
        except KeeperError as exc:
            raise ResourceError(redact(str(exc))) from exc
        return "\n".join(m.line() for m in pinned) or "(no pinned memories)"

    @server.resource("engram://instructions", name="project instructions",
                     description="The repository's AGENTS.md, CLAUDE.md and .engram/rules/*.md "
                                 "that apply at its root, read again when they change: "
                                 "follow them, even after your context was compacted.",
                     mime_type="text/markdown")
    def project_instructions() -> str:
        try:
            text, _ = keeper.instructions()
        except OSError as exc:
            raise ResourceError(redact(f"the instructions could not be read: {exc}")) from exc
        return text or "(this repository has no AGENTS.md, CLAUDE.md or .engram/rules)"

    return server


def serve(repo: Path, data_dir: Path | None = None, backend: str = "cards") -> int:
    """Run the server on stdin/stdout until the client closes it."""
    from memory.recall.keeper import Keeper

    keeper = Keeper(repo, data_dir, backend)
    # MiniLM (native code, mostly outside the GIL) and the kept facts load on a thread of
    # their own while the MCP SDK is imported; the writing session (the index refresh,
    # LanceDB) opens only after the first answer (``attempt``) or at the first remember
    threading.Thread(target=keeper.warm, name="engram-warm", daemon=True).start()
    build_server(keeper).run("stdio")
    return 0
