"""The repository tools as one ``Toolbox`` for the Agent's tool loop (offered beside a
backend's memory functions by ``memory.acting.toolloop.combine``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memory.acting.toolloop import Tool, ToolResult
from memory.acting.tools import grep, listing, read, run, search
from memory.acting.tools._git import GitFailed, files

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex

RESULT_CHARS = 12_000  # of a tool's output kept in the turn (each tool bounds its own)
ENUM_FILES = 100  # a constrained model chooses read_file's path among this many at most
ENUM_GLOBS = 12  # extensions, and top-level folders, offered as list_files globs


@dataclass
class RepoTools:
    """read_file, grep, list_files, search_code (with an index) and run (with a
    ``RunTool``) over the repository at ``root``. ``constrained``: the model decodes
    under the schema; read_file's path is then one of the files when there are few."""

    root: Path
    index: RepoIndex | None = None
    runner: run.RunTool | None = None
    constrained: bool = False
    kind = "functions (tools on the repository)"
    purpose = "read, search or list the repository's files, or run a command"
    result_chars = RESULT_CHARS
    repeats_end = True  # the same call twice in a turn ends the loop

    def tools(self) -> list[Tool]:
        names = self._files() if self.constrained else []
        tools = [self._read_tool(names), grep.TOOL, self._list_tool(names)]
        if self.index is not None:
            tools.append(search.TOOL)
        if self.runner is not None:
            tools.append(run.TOOL)
        return tools

    def _files(self) -> list[str]:
        try:
            return files(self.root)
        except GitFailed:
            return []

    def _read_tool(self, names: list[str]) -> Tool:
        """Under constrained decoding the path is one of the files, when there are few."""
        if not names or len(names) > ENUM_FILES:
            return read.TOOL
        return Tool(read.TOOL.name, read.TOOL.description,
                    {**read.TOOL.parameters, "path": {"type": "string", "enum": names}})

    def _list_tool(self, names: list[str]) -> Tool:
        """Under constrained decoding the glob is one of: all, each extension, each
        top-level folder (a small model otherwise writes the tool's name as a glob)."""
        if not names:
            return listing.TOOL
        suffixes = sorted({f"*{PurePosixPath(n).suffix}" for n in names
                           if PurePosixPath(n).suffix})
        folders = sorted({f"{n.split('/')[0]}/*" for n in names if "/" in n})
        globs = ["", *suffixes[:ENUM_GLOBS], *folders[:ENUM_GLOBS]]
        return Tool(listing.TOOL.name, listing.TOOL.description,
                    {"glob": {"type": "string", "enum": globs}})

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        def text(key: str) -> str:
            return str(args.get(key, ""))

        def number(key: str, default: int) -> int:
            try:
                return int(args.get(key, default))
            except (TypeError, ValueError):
                return default

        if name == read.TOOL.name:
            return await asyncio.to_thread(read.read_file, self.root, text("path"),
                                           number("start", 1), number("end", 0))
        if name == grep.TOOL.name:
            return await asyncio.to_thread(grep.grep, self.root, text("pattern"), text("glob"))
        if name == listing.TOOL.name:
            return await asyncio.to_thread(listing.list_files, self.root, text("glob"))
        if name == search.TOOL.name and self.index is not None:
            return await asyncio.to_thread(search.search_code, self.index, text("query"),
                                           number("k", 5))
        if name == run.TOOL.name and self.runner is not None:
            return await self.runner(text("command"))
        return ToolResult(f"No tool {name!r}.", ok=False)
