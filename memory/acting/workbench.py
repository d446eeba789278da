"""What the assistant does to the repository beside answering: the one place the app and
the headless command line turn answers into edits, commits and undos, and give the model
its repository tools.

    bench = Workbench(agent, root, ConsentPolicy(asker))   # agent.tools, the edit format
                                            # as the model can follow them (bench.offered)
    turn = await agent.ask(query)
    prepared = bench.propose(turn)          # None: no edit blocks; nothing is written
    if prepared is not None and prepared.ok:
        bench.apply(prepared, turn)         # or bench.reject(prepared, turn)
    bench.undo()                            # the last applied answer reverted

What the model is offered follows its profile (memory/llm/capabilities.py): the embedded
small model gets neither the tools nor the edit format, and an edit block it writes
anyway is not proposed; ``offer`` applies another model's profile after a switch.

Every step is an ``edit`` record in the session's transcript (``agent.record``): op
``proposed`` (paths, ok, message, diff), ``applied`` (commit), ``rejected``, ``undone``
(commit) or ``refused`` (an apply or undo that did not happen, with its message; ``of``
says which).

The developer's uncommitted work is never touched, by refusal (memory/acting/edits): a block
aimed at a file with uncommitted changes (staged or not), an untracked or an ignored
file is refused and nothing of the answer is written; the commit is built in a
temporary index holding HEAD plus the edited paths, so changes to other files, staged or
not, stay as they were and are not committed; an undo is refused when a file of engram's
commit differs now. Nothing is stashed.

What the model saw (``prepare``'s ``seen``): each file it read with ``read_file`` during
the turn, as the blob id of the bytes it was given (the first read of a path in the
turn). An edit of such a file that changed since then (by the developer, another
program, an edit applied meanwhile) is refused. Code sections the backend showed come
from the index, which follows the working tree: their file is not given a blob id here,
since the index does not keep the bytes it read; a block whose SEARCH text is no longer
in the file is refused by the match itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memory.acting.edits import EDIT_FORMAT, Applied, Prepared, Undone, has_blocks, prepare
from memory.acting.edits import apply as apply_edits
from memory.acting.edits import undo as undo_edits
from memory.acting.edits.gitstate import blob_hash
from memory.acting.edits.instructions import example_messages
from memory.acting.edits.paths import PathRefused, safe_relative
from memory.acting.jail.tree import TreeJail
from memory.acting.toolloop import ToolResult
from memory.acting.tools.box import RepoTools
from memory.acting.tools.consent import ConsentPolicy
from memory.acting.tools.read import TOOL as READ_TOOL
from memory.acting.tools.run import Jail, RunTool
from memory.llm.capabilities import EVERYTHING, Capabilities, capabilities_of
from memory.redact import redact

if TYPE_CHECKING:
    from memory.turn.agent import Agent
    from memory.types import Turn

Done = TypeVar("Done", Applied, Undone)

EDIT_PROMPT = "\n\nYou can change the repository's files with edit blocks.\n"


def _literal(text: str) -> str:
    """``text`` safe inside the system prompt's ``str.format`` template."""
    return text.replace("{", "{{").replace("}", "}}")


EDITING = EDIT_PROMPT + _literal(EDIT_FORMAT)  # what the system prompt gains with edits


@dataclass
class SeeingTools(RepoTools):
    """The repository tools, noting the blob id of each file ``read_file`` showed the
    model (``seen``: cleared by ``Workbench.propose``, and when a read comes for a later
    turn than the ones before, ``turns`` counting them) and reading the agent's index
    when it is set later (``env``: the agent's ``BackendEnv``)."""

    env: Any = None
    turns: Callable[[], int] | None = None
    seen: dict[str, str] = field(default_factory=dict)
    seen_turn: int = -1

    def tools(self) -> list[Any]:
        self._follow_agent()
        return super().tools()

    def _follow_agent(self) -> None:
        if self.env is None:
            return
        if getattr(self.env, "repo", None) is not None:
            self.index = self.env.repo
        llm = getattr(self.env, "llm", None)
        if llm is not None:
            self.constrained = llm.constrained()

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        self._follow_agent()
        if name != READ_TOOL.name:
            return await super().call(name, args)
        try:  # the bytes as they are now, before the read: what the model is about to see
            rel = safe_relative(self.root, str(args.get("path", "")))
            data = (self.root / rel).read_bytes()
        except (PathRefused, OSError):
            rel, data = "", None
        result = await super().call(name, args)
        if result.ok and data is not None:
            turn = self.turns() if self.turns is not None else 0
            if turn != self.seen_turn:  # a turn that was never proposed left its reads
                self.seen.clear()
                self.seen_turn = turn
            self.seen.setdefault(rel, blob_hash(data))
        return result


class Workbench:
    """What the assistant does to the repository beside answering."""

    def __init__(self, agent: Agent, root: Path, consent: ConsentPolicy, *,
                 jail: Jail | None = None, commands: bool = True,
                 offer: Capabilities | None = None) -> None:
        self.agent = agent
        self.root = Path(root)
        self.consent = consent
        runner = None
        if commands:
            runner = RunTool(self.root, consent, jail or TreeJail())
        self.tools = SeeingTools(self.root, agent.env.repo, runner,
                                 constrained=agent.llm.constrained(), env=agent.env,
                                 turns=lambda: len(agent.turns))
        self._prompt = agent.config.system_prompt.replace(EDITING, "")
        self.offered = EVERYTHING
        self.offer(offer)
        self._pending: Prepared | None = None
        self._pending_turn: int | None = None
        agent.focus = self.open_paths  # their folders' instruction files join the context

    def open_paths(self) -> list[str]:
        """The files of the proposal waiting to be applied (none: nothing is open)."""
        return list(self._pending.paths) if self._pending is not None else []

    def offer(self, capabilities: Capabilities | None = None) -> Capabilities:
        """Offer the agent's model the tools and the edit format it can follow: the
        profile of its model (memory/llm/capabilities.py) unless ``capabilities`` are given
        (replay's agentic benchmark offers every model both). Called again after the
        model changes."""
        offered = capabilities or capabilities_of(self.agent.llm.model)
        self.offered = offered
        self.agent.tools = self.tools if offered.tools else None
        prompt = self._prompt + (EDITING if offered.edits else "")
        self.agent.config = replace(self.agent.config, system_prompt=prompt)
        self.agent.examples = example_messages() if offered.edits else []
        return offered

    @property
    def pending(self) -> Prepared | None:
        """The last proposal that can be applied and was not yet applied or rejected."""
        return self._pending

    def seen(self) -> dict[str, str]:
        """What the model was shown of each file during the turn (``read_file`` calls)."""
        return dict(self.tools.seen)

    def propose(self, turn: Turn) -> Prepared | None:
        """The turn's edits checked against the work tree, nothing written; None when the
        answer holds no edit blocks (or the turn failed). Recorded as ``proposed``; one
        that applies becomes ``pending`` (an earlier pending one is ``rejected``)."""
        seen = self.seen()
        self.tools.seen.clear()  # the next turn starts seeing afresh
        if not self.offered.edits or not turn.ok or not has_blocks(turn.assistant):
            return None
        prepared = prepare(self.root, turn.assistant, seen, index=self.agent.env.repo)
        paths = prepared.paths or sorted({p.path for p in prepared.problems if p.path})
        self._record("proposed", turn.index, paths, prepared.ok, prepared.message,
                     diff=prepared.diff)
        if self._pending is not None:
            self.reject(self._pending, None, "superseded by a newer proposal")
        if prepared.ok:
            self._pending, self._pending_turn = prepared, turn.index
        return prepared

    def apply(self, prepared: Prepared, turn: Turn) -> Applied:
        """Write and commit ``prepared`` (the turn's query is the commit message); a
        refusal writes nothing. Recorded as ``applied`` (with the commit) or ``refused``."""
        answer_id = f"{self.agent.env.session_id}:{turn.index}"
        applied = apply_edits(prepared, turn.user, answer_id)
        self._record("applied" if applied.ok else "refused", turn.index,
                     list(applied.paths or prepared.paths), applied.ok, applied.message,
                     commit=applied.commit, of="apply")
        if prepared is self._pending:
            self._pending = self._pending_turn = None
        return self._caught_up(applied) if applied.ok else applied

    def reject(self, prepared: Prepared, turn: Turn | None,
               why: str = "the developer declined it") -> None:
        """Leave ``prepared`` unapplied. Recorded as ``rejected``."""
        index = turn.index if turn is not None else self._pending_turn
        self._record("rejected", index, prepared.paths, True, why)
        if prepared is self._pending:
            self._pending = self._pending_turn = None

    def undo(self) -> Undone:
        """Revert engram's last applied answer. Recorded as ``undone`` or ``refused``."""
        undone = undo_edits(self.root)
        self._record("undone" if undone.ok else "refused", None, list(undone.paths),
                     undone.ok, undone.message, commit=undone.commit, of="undo")
        return self._caught_up(undone) if undone.ok else undone

    def _caught_up(self, done: Done) -> Done:
        """The agent's repository index brought up to the tree just changed (only the
        changed files are embedded again), so the next turn's context and the tools'
        search see the new code: the one place an applied or undone edit reaches the
        index. A failure leaves the commit as it is and is said in ``index_error``."""
        index = self.agent.env.repo
        if index is None:  # still being built: it reads the new tree itself
            return done
        try:
            index.refresh()
        except Exception as exc:
            return replace(done, index_error=redact(f"{type(exc).__name__}: {exc}"))
        return done

    def _record(self, op: str, turn: int | None, paths: list[str], ok: bool, message: str,
                **extra: str) -> None:
        record: dict[str, Any] = {"type": "edit", "op": op, "turn": turn, "paths": paths,
                                  "ok": ok, "message": message}
        record.update({k: v for k, v in extra.items() if v})
        if op == "proposed":
            record.setdefault("diff", "")
        self.agent.record(record)

