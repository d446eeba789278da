"""The replayed model's tools: reads answered from the record, tests run again in the jail.

``ReplayTools`` offers the replayed model engram's repository tools (read_file, grep,
list_files, search_code, run) and answers each call one of four ways, said in the
call's record (``answered``) and counted:

- ``record``: a read (or a command other than a test) the session recorded is answered
  with its recorded output, and no tool runs. A read covers a narrower read of the same
  file; the same turn's call is preferred, then the nearest earlier one;
- ``live``: a read the record does not hold (the replayed model asked something new),
  or of a file the replay has edited since, runs the real read-only tool on the pair's
  clone of the repository at the session's commit (with the replay's edits so far):
  what the original session would have seen there. Replays differ from the recording
  exactly by these, so they are counted per pair;
- ``jail``: a test command (``tests``, ``pytest ...``) always runs again, in the jail
  (``memory.acting.jail.tree.TreeJail``) on a copy of the clone, so its output is that of the
  code as the replay left it;
- ``refused``: a command that is not a test and not in the record is not run (a replay
  does not run new commands), nor is a test where the jail does not work; the model is
  told so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.acting.toolloop import Tool, ToolResult
from memory.acting.tools import run
from memory.acting.tools.box import RepoTools
from replay.agentic.calls import READS, ToolLog, canonical, is_test

WAYS = ("record", "live", "jail", "refused")


@dataclass
class ReplayTools:
    log: ToolLog
    live: RepoTools  # the read-only tools on the pair's clone (no runner)
    runner: run.RunTool  # tests, in the jail, on the clone
    turn: int = 0  # the query being replayed
    changed: set[str] = field(default_factory=set)  # paths the replay's edits changed
    answered: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WAYS, 0))
    kind = RepoTools.kind
    purpose = RepoTools.purpose
    result_chars = RepoTools.result_chars
    repeats_end = True

    def tools(self) -> list[Tool]:
        return [*self.live.tools(), run.TOOL]

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name == run.TOOL.name:
            return await self._command(str(args.get("command", "")))
        if name not in READS:
            return ToolResult(f"No tool {name!r}.", ok=False)
        wanted = canonical(name, args)
        stale = name == "read_file" and wanted["path"] in self.changed
        found = None if stale else self.log.find(name, wanted, self.turn)
        if found is not None and found.result is not None:
            return self._said("record", ToolResult(found.result, found.ok,
                                                   {"recorded_turn": found.turn,
                                                    "recorded_as": found.tool}))
        result = await self.live.call(name, args)
        why = "edited since" if stale else "not in the record"
        return self._said("live", ToolResult(result.text, result.ok, {**result.meta,
                                                                      "why_live": why}))

    async def _command(self, command: str) -> ToolResult:
        if is_test(command):
            result = await self.runner(command)
            ran = result.meta.get("consent") != "not-asked"  # no jail here: nothing ran
            return self._said("jail" if ran else "refused", result)
        found = self.log.find("run", {"command": command}, self.turn)
        if found is not None and found.result is not None:
            return self._said("record", ToolResult(found.result, found.ok,
                                                   {"recorded_turn": found.turn,
                                                    "recorded_as": found.tool}))
        return self._said("refused", ToolResult(
            "Not run: this is a replay of a recorded session; it runs the tests again but "
            "no new command, and this one is not in the record.", ok=False))

    def _said(self, how: str, result: ToolResult) -> ToolResult:
        self.answered[how] += 1
        return ToolResult(result.text, result.ok, {**result.meta, "answered": how})
