"""The Agent's tool loop: the model may call functions before it answers.

A ``Toolbox`` offers the functions of one answer and runs a call: a backend's memory
functions (``toolbox(query)``: MemGPT's), the repository tools (memory/acting/tools/), or both
(``combine``). The loop asks the model, one structured step at a time,
whether to ``answer`` or to call a function; each call and its output join the context
pack as a ``calls`` section (so the inspector shows it and the answer sees it). The calls
and the step's prompt follow the developer's query in its message, after the system
prompt and the history, which stay the same for every step and the answer: a server
that caches prompts (llama.cpp, vLLM, the embedded model's state cache) evaluates them
once per turn. A call
with ``request_heartbeat`` true, or a failed call (MemGPT's forced heartbeat), chains
another step; anything else ends the loop and the model answers, as does, for a box
with ``repeats_end`` (the repository tools), a call the turn made already (its output
was given: small models repeat themselves). A request the developer denied (a command
refused in the consent prompt: its output tells the model so) ends the loop when it comes
again, for any box, without asking twice. At most ``max_steps`` steps, every one
counted as ``memory`` usage.

What the loop sends stays within the window: before each step the calls' sections must
fit the room the pack leaves under ``limit`` (the tokens the pack may hold; by default
the window less a step's reply and a margin). A backend's ``condenser()`` acts on the
outputs first (``mask`` masks old ones, ``compact`` summarises them); then
``memory.acting.tools.trajectory.fit`` masks, clips or drops what still does not fit. What the
model stopped seeing is in the outcome (``dropped``), and so in the turn's meta.

Every model takes the same structured step (``LLM.complete_json``): a JSON Schema whose
``call`` is one of the functions (``anyOf``, the function's name as a one-value
``enum``) with its arguments. The embedded model decodes under that schema's grammar,
so it always names a real function with well-formed arguments; an API model gets the
provider's schema mode, JSON mode or the schema in the prompt, as every structured call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.acting.tools.trajectory import Condenser, Step, Trajectory, fit
from memory.llm import structured
from memory.llm.client import LLM, LLMError
from memory.types import ContextPack, Section

MAX_STEPS = 6
ANSWER = "answer"
HEARTBEAT = "request_heartbeat"
RESULT_CHARS = 3000  # MemGPT's FUNCTION_RETURN_CHAR_LIMIT: a toolbox may set its own
STEP_TOKENS = 300  # the longest reply a step may take
MARGIN = 64  # chat-template overhead
FIT_ATTEMPTS = 8  # measurements of a request's tokens before it is sent
DENIED = "denied"  # a call's consent when the developer refused it (memory/acting/tools/consent.py)

STEP_PROMPT = """Before you answer, you may call one of your {kind}. Choose
"answer" to reply to the developer now. Choose a function to {purpose};
set request_heartbeat to true when you want another step after it (to call a further
function), false to answer right after it.
Functions:
{functions}"""
# {"call": {"function": "answer"}} or
# {"call": {"function": "<name>", <arguments>..., "request_heartbeat": bool}}


@dataclass(frozen=True)
class Tool:
    """One function a toolbox offers: its name, what it does, its arguments' schema
    (``properties`` of an object; every one required)."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    text: str
    ok: bool = True
    meta: dict[str, Any] = field(default_factory=dict)  # recorded with the call (consent, ...)


class Toolbox(Protocol):
    """The functions one answer may call. Optional attributes: ``kind`` and ``purpose``
    (how the step prompt names them), ``result_chars`` (how much of an output is kept),
    ``repeats_end`` (a repeated call ends the loop)."""

    def tools(self) -> list[Tool]:
        ...

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        ...


@dataclass
class Combined:
    """Several toolboxes offered as one: a call goes to the first box offering the name."""

    boxes: list[Toolbox]

    @property
    def repeats_end(self) -> bool:
        return any(getattr(b, "repeats_end", False) for b in self.boxes)

    kind = "functions (memory functions and tools on the repository)"
    purpose = "manage your memory, or read, search or run things in the repository"

    @property
    def result_chars(self) -> int:
        return max(int(getattr(b, "result_chars", RESULT_CHARS)) for b in self.boxes)

    def tools(self) -> list[Tool]:
        seen: dict[str, Tool] = {}
        for box in self.boxes:
            for tool in box.tools():
                seen.setdefault(tool.name, tool)
        return list(seen.values())

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        for box in self.boxes:
            if any(t.name == name for t in box.tools()):
                return await box.call(name, args)
        return ToolResult(f"No function {name!r}.", ok=False)


def combine(*boxes: Toolbox | None) -> Toolbox | None:
    """The boxes given (None ones left out) as one toolbox; None when there is none."""
    found = [b for b in boxes if b is not None]
    if not found:
        return None
    return found[0] if len(found) == 1 else Combined(found)


def step_schema(tools: list[Tool]) -> dict[str, Any]:
    """``{"call": one of the functions with its arguments, or "answer"}``."""
    options: list[dict[str, Any]] = [{
        "type": "object", "properties": {"function": {"type": "string", "enum": [ANSWER]}},
        "required": ["function"], "additionalProperties": False}]
    for tool in tools:
        properties = {"function": {"type": "string", "enum": [tool.name]}, **tool.parameters,
                      HEARTBEAT: {"type": "boolean"}}
        options.append({"type": "object", "properties": properties,
                        "required": list(properties), "additionalProperties": False})
    return {"type": "object", "properties": {"call": {"anyOf": options}},
            "required": ["call"], "additionalProperties": False}


def describe(tools: list[Tool]) -> str:
    lines = []
    for tool in tools:
        args = ", ".join([*tool.parameters, HEARTBEAT])
        lines.append(f"- {tool.name}({args}): {tool.description}")
    lines.append(f"- {ANSWER}(): reply to the developer now.")
    return "\n".join(lines)


def step_note(box: Toolbox, tools: list[Tool]) -> str:
    return STEP_PROMPT.format(kind=getattr(box, "kind", "memory functions"),
                              purpose=getattr(box, "purpose", "read or edit your memory"),
                              functions=describe(tools))


@dataclass
class LoopOutcome:
    """What the loop did: each call with its arguments and result, why it stopped, what
    the model stopped seeing (``dropped``) and the most tokens a step's pack held."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    error: str = ""
    dropped: list[dict[str, Any]] = field(default_factory=list)
    limit: int = 0
    peak: int = 0
    stopped: str = ""  # why the loop ended before the model chose to answer

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"calls": self.calls, "steps": self.steps}
        if self.error:
            meta["error"] = self.error
        if self.dropped:
            meta["dropped"] = self.dropped
        if self.stopped:
            meta["stopped"] = self.stopped
        if self.limit:
            meta["limit"], meta["peak"] = self.limit, self.peak
        return meta


def default_limit(llm: LLM) -> int:
    """The tokens a step's pack may hold: the window less a step's reply and a margin."""
    return max(0, llm.context_window() - STEP_TOKENS - MARGIN)


OnCall = Callable[[dict[str, Any]], None]


async def run_tools(llm: LLM, box: Toolbox, pack: ContextPack, max_steps: int = MAX_STEPS,
                    *, limit: int | None = None, condenser: Condenser | None = None,
                    on_call: OnCall | None = None) -> LoopOutcome:
    """Let the model call ``box``'s functions until it answers, a chain ends or
    ``max_steps`` steps were taken; the calls' sections are appended to ``pack`` and kept
    within ``limit`` tokens (see the module's docstring). ``on_call`` gets each call as it
    finishes (the Agent writes it to the transcript)."""
    outcome = LoopOutcome(limit=limit if limit is not None else default_limit(llm))
    trajectory = Trajectory()
    base = list(pack.sections)
    chars = int(getattr(box, "result_chars", RESULT_CHARS))
    repeats_end = bool(getattr(box, "repeats_end", False))
    while outcome.steps < max_steps:
        tools = box.tools()
        if not tools:  # nothing to call (a constrained model offered no choice): answer
            break
        note, schema = step_note(box, tools), step_schema(tools)
        await _keep_within(llm, trajectory, pack, base, outcome, note + told(llm, schema),
                           condenser)
        outcome.steps += 1
        try:
            decision = await llm.complete_json(pack.to_messages(note), schema,
                                               purpose="memory", name="step",
                                               max_tokens=STEP_TOKENS)
        except LLMError as exc:
            outcome.error = f"step {outcome.steps}: {exc}"
            break
        args = dict(decision["call"])
        name = str(args.pop("function"))
        if name == ANSWER:
            break
        heartbeat = bool(args.pop(HEARTBEAT, False))
        denied = next((c["step"] for c in outcome.calls if c.get("consent") == DENIED
                       and c["function"] == name and c["args"] == args), None)
        if denied is not None:  # the developer said no once: never asked again this turn
            outcome.stopped = (f"step {outcome.steps} asked again for what the developer "
                               f"denied at step {denied}")
            break
        again = next((c["step"] for c in outcome.calls if repeats_end
                      and c["function"] == name and c["args"] == args), None)
        if again is not None:  # its output was given already: a small model's loop
            outcome.stopped = f"step {outcome.steps} repeated the call of step {again}"
            break
        started = time.monotonic()
        try:
            result = await box.call(name, args)
        except Exception as exc:  # a broken function is the model's failed call, not ours
            result = ToolResult(f"{type(exc).__name__}: {exc}", ok=False)
        output = result.text[:chars]
        trajectory.steps.append(Step(len(trajectory.steps) + 1, name, args, result.ok, output))
        call = {"function": name, "args": args, "ok": result.ok, "heartbeat": heartbeat,
                "result": output, "step": outcome.steps,
                "seconds": round(time.monotonic() - started, 3), **result.meta}
        outcome.calls.append(call)
        if on_call is not None:
            on_call(call)
        if result.ok and not heartbeat:
            break
    await _keep_within(llm, trajectory, pack, base, outcome, "", condenser)
    return outcome


def told(llm: LLM, schema: dict[str, Any]) -> str:
    """What the structured call adds to the system prompt for the schema (in the modes
    that tell the model the schema in words), as it will be counted in the request."""
    words = structured.told(llm.structured_mode(), schema)
    return f"\n\n{words}" if words else ""


async def _keep_within(llm: LLM, trajectory: Trajectory, pack: ContextPack,
                       base: list[Section], outcome: LoopOutcome, note: str,
                       condenser: Condenser | None) -> None:
    """Condense the calls into the room ``pack`` leaves under the limit, then show them
    in ``pack``. The room is measured on the messages as sent (``note``: the step's
    prompt; none for the answer): what sections do not count (each message's own
    tokens, the headings) is taken off it, and the calls fitted again."""
    count = llm.count_tokens
    room = outcome.limit - count(note) - pack.query_tokens - sum(s.tokens for s in base)
    if trajectory.steps and condenser is not None:
        seen = len(trajectory.events)
        await condenser.condense(trajectory, room, count)
        outcome.dropped += [e.as_dict() for e in trajectory.events[seen:]]
    sent = 0
    for attempt in range(FIT_ATTEMPTS):
        seen = len(trajectory.events)
        if trajectory.steps:
            fit(trajectory, room, count)
        outcome.dropped += [e.as_dict() for e in trajectory.events[seen:]]
        pack.sections = [*base, *trajectory.sections(count)]
        messages = pack.to_messages(note)
        sent = llm.count_messages(messages)
        if sent <= outcome.limit or not trajectory.shown():
            break
        unseen = sent - pack.tokens - count(note)  # what the sections do not count
        # the excess, doubled at each attempt: a clip's marker and the tokens at the
        # joins can keep a request a token over while its sections shrink one by one
        room = min(room - ((sent - outcome.limit) << attempt),
                   outcome.limit - count(note) - pack.query_tokens
                   - sum(s.tokens for s in base) - unseen)
    outcome.peak = max(outcome.peak, sent)
