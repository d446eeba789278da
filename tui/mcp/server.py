"""``engram mcp [PATH]``: the repository's kept memory as an MCP server over stdio.

A thin front-end over ``memory.recall.keeper.Keeper`` (the engine the app's ``cards`` sessions
share with shared memory): each tool validates its input at the edge and answers a
``KeeperError`` as an error result with the reason, so one bad call never stops the
server. The tools' descriptions are written for the model that calls them.
"""

from __future__ import annotations

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


class StartError(RuntimeError):
    """The server cannot start (not a git repository, a backend that keeps no memory)."""


def _answer(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1)


def _schema(**fields: tuple[str, str, bool]) -> dict[str, Any]:
    """A tool's input schema: each field is (JSON type, description, required)."""
    return {"type": "object", "additionalProperties": False,
            "properties": {name: {"type": kind, "description": what}
                           for name, (kind, what, _) in fields.items()},
            "required": [name for name, (_, _, needed) in fields.items() if needed]}


_ID = ("string", "the memory's id, from `recall` or `memories`", True)
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "recall": (RECALL, _schema(query=("string", "what you are about to do, or the question",
                                      True),
                               limit=("integer", "how many memories at most (1-50; 5)",
                                      False))),
    "remember": (REMEMBER, _schema(text=("string", "one fact or decision", True),
                                   about=("string", "the code it concerns (optional)",
                                          False))),
    "forget": (FORGET, _schema(id=_ID)),
    "pin": (PIN, _schema(id=_ID)),
    "unpin": (UNPIN, _schema(id=_ID)),
    "memories": (MEMORIES, _schema(filter=("string", "a word, `pinned` or `stale` "
                                                     "(optional)", False))),
    "explain": (EXPLAIN, _schema(id=_ID)),
}
PINNED_URI = "engram://memories/pinned"
INSTRUCTIONS_URI = "engram://instructions"


def _arguments(name: str, given: dict[str, Any] | None) -> dict[str, Any]:
    """The call's arguments checked against the tool's schema (KeeperError: why not)."""
    from memory.recall.keeper import KeeperError

    schema = TOOLS[name][1]
    given = dict(given or {})
    unknown = sorted(set(given) - set(schema["properties"]))
    if unknown:
        raise KeeperError(f"{name} takes {', '.join(schema['properties'])}; not "
                          f"{', '.join(u[:40] for u in unknown)}")
    for field in schema["required"]:
        if field not in given:
            raise KeeperError(f"{name} needs `{field}`")
    for field, value in given.items():
        kind = schema["properties"][field]["type"]
        if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            if not (isinstance(value, float) and value.is_integer()):
                raise KeeperError(f"`{field}` is a whole number, not {str(value)[:40]!r}")
            given[field] = int(value)
        if kind == "string" and not isinstance(value, str):
            raise KeeperError(f"`{field}` is a string, not {type(value).__name__}")
    return given


async def call_tool(keeper: Any, name: str, given: dict[str, Any] | None) -> Any:
    """What tool ``name`` answers (KeeperError for a refusal)."""
    from memory.recall.keeper import KeeperError

    if name not in TOOLS:
        raise KeeperError(f"no tool {name[:80]!r}; the tools: {', '.join(TOOLS)}")
    args = _arguments(name, given)
    if name == "recall":
        return [m.as_dict() for m in keeper.recall(args["query"], args.get("limit", 5))]
    if name == "remember":
        return (await keeper.remember(args["text"], args.get("about", ""))).as_dict()
    if name == "forget":
        return {"forgotten": keeper.forget(args["id"]).as_dict()}
    if name in ("pin", "unpin"):
        return {f"{name}ned": keeper.pin(args["id"], name == "pin").as_dict()}
    if name == "memories":
        return [m.as_dict() for m in keeper.memories(args.get("filter", ""))]
    return keeper.explain(args["id"])


def read_resource(keeper: Any, uri: str) -> str:
    """The text of resource ``uri`` (KeeperError, OSError: why not)."""
    from memory.recall.keeper import KeeperError

    if uri == PINNED_URI:
        return "\n".join(m.line() for m in keeper.pinned()) or "(no pinned memories)"
    if uri == INSTRUCTIONS_URI:
        text, _ = keeper.instructions()
        return text or "(this repository has no AGENTS.md, CLAUDE.md or .engram/rules)"
    raise KeeperError(f"no resource {uri[:200]!r}")


def build_server(keeper: Any) -> Any:
    """The MCP server of ``keeper`` on the SDK's low-level server (its tools and resources
    declared here: the high-level ``MCPServer`` costs a third of a second more to import
    and builds a pydantic model per tool, on a path where the first answer is timed)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from memory import __version__
    from memory.recall.keeper import KeeperError
    from memory.redact import redact

    def text(value: str) -> list[Any]:
        return [types.TextContent(type="text", text=value)]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=about, input_schema=schema)
            for name, (about, schema) in TOOLS.items()])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        """A refusal or a failure is an error result with the reason: the server goes on."""
        try:
            answer = _answer(await call_tool(keeper, params.name, params.arguments))
        except KeeperError as exc:
            return types.CallToolResult(content=text(redact(str(exc))), is_error=True)
        except Exception as exc:  # the store, the repository, a library: said, not raised
            return types.CallToolResult(content=text(redact(
                f"engram could not do that: {type(exc).__name__}: {exc}")), is_error=True)
        finally:
            keeper.start()  # the writing session opens after the first answer, not before
        return types.CallToolResult(content=text(answer))

    async def list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=PINNED_URI, name="pinned memories", mime_type="text/markdown",
                           description="The memories pinned for this repository, one a "
                                       "line, with the code they cite and their freshness."),
            types.Resource(uri=INSTRUCTIONS_URI, name="project instructions",
                           mime_type="text/markdown",
                           description="The repository's AGENTS.md, CLAUDE.md and "
                                       ".engram/rules/*.md that apply at its root, read again "
                                       "when they change: follow them, even after your "
                                       "context was compacted.")])

    async def on_read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        try:
            body = read_resource(keeper, uri)
        except (KeeperError, OSError) as exc:
            raise MCPError(types.INVALID_PARAMS, redact(f"{uri[:200]}: {exc}")) from exc
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, text=body, mime_type="text/markdown")])

    return Server("engram", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=on_call_tool,
                  on_list_resources=list_resources, on_read_resource=on_read_resource)


async def _run(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve(repo: str, data_dir: Path | None = None, backend: str = "cards") -> int:
    """Run the server on stdin/stdout until the client closes it.

    The repository's memory is opened and warmed (numpy, git, MiniLM on ONNX Runtime, the
    kept facts) on a thread of its own while this one imports the MCP SDK (most of the
    start: its protocol types are ~550 pydantic models); a bad repository or backend is
    raised here, before the server answers anything."""
    opened: dict[str, Any] = {}
    ready = threading.Event()

    def open_and_warm() -> None:
        try:
            from memory.recall.keeper import Keeper

            opened["keeper"] = Keeper(Path(repo), data_dir, backend)
        except Exception as exc:  # said by the main thread, before serving
            opened["error"] = exc
            return
        finally:
            ready.set()
        opened["keeper"].warm()

    threading.Thread(target=open_and_warm, name="engram-warm", daemon=True).start()
    import anyio
    import mcp.server.lowlevel  # the SDK, while the memory opens
    import mcp.server.stdio  # noqa: F401

    ready.wait()
    if "error" in opened:
        raise StartError(str(opened["error"])) from opened["error"]
    anyio.run(_run, build_server(opened["keeper"]))
    return 0
