"""The Agent's tool loop: a backend that offers functions lets the model call them
before it answers.

A backend with a ``toolbox(query)`` method returns a ``Toolbox`` for one answer: the
functions it offers and a ``call`` that runs one. The loop asks the model, one
structured step at a time, whether to ``answer`` or to call a function; each result
joins the context pack as a ``memory`` section (so the inspector shows it and the
answer sees it). A call with ``request_heartbeat`` true, or a failed call (MemGPT's
forced heartbeat), chains another step; anything else ends the loop and the model
answers. At most ``max_steps`` steps, every one counted as ``memory`` usage.

Every model takes the same structured step (``LLM.complete_json``): a JSON Schema whose
``call`` is one of the functions (``anyOf``, the function's name as a one-value
``enum``) with its arguments. The embedded model decodes under that schema's grammar,
so it always names a real function with well-formed arguments; an API model gets the
provider's schema mode, JSON mode or the schema in the prompt, as every structured call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.llm import LLM, LLMError
from memory.types import ContextPack, Section

MAX_STEPS = 6
ANSWER = "answer"
HEARTBEAT = "request_heartbeat"
RESULT_CHARS = 3000  # MemGPT's FUNCTION_RETURN_CHAR_LIMIT

STEP_PROMPT = """Before you answer, you may call one of your memory functions. Choose
"answer" to reply to the developer now. Choose a function to read or edit your memory;
set request_heartbeat to true when you want another step after it (to call a further
function), false to answer right after it.
Functions:
{functions}"""
# {"call": {"function": "answer"}} or
# {"call": {"function": "<name>", <arguments>..., "request_heartbeat": bool}}


@dataclass(frozen=True)
class Tool:
    """One function a backend offers: its name, what it does, its arguments' schema
    (``properties`` of an object; every one required)."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    text: str
    ok: bool = True


class Toolbox(Protocol):
    """The functions one answer may call, over a scratch copy of the backend's memory."""

    def tools(self) -> list[Tool]:
        ...

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        ...


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


def render_call(name: str, args: dict[str, Any], result: ToolResult) -> str:
    shown = json.dumps(args, ensure_ascii=False)
    status = "" if result.ok else " (failed)"
    return f"Function call {name}({shown}){status} returned:\n{result.text[:RESULT_CHARS]}"


def _step_messages(pack: ContextPack, functions: str) -> list[dict[str, Any]]:
    messages = pack.to_messages()
    note = STEP_PROMPT.format(functions=functions)
    if messages and messages[0]["role"] == "system":
        messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{note}"}
    else:
        messages.insert(0, {"role": "system", "content": note})
    return messages


@dataclass
class LoopOutcome:
    """What the loop did: each call with its arguments and result, and why it stopped."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    error: str = ""

    def meta(self) -> dict[str, Any]:
        return {"calls": self.calls, "steps": self.steps,
                **({"error": self.error} if self.error else {})}


async def run_tools(llm: LLM, box: Toolbox, pack: ContextPack,
                    max_steps: int = MAX_STEPS) -> LoopOutcome:
    """Let the model call ``box``'s functions until it answers, a chain ends or
    ``max_steps`` steps were taken; each result is appended to ``pack``."""
    outcome = LoopOutcome()
    while outcome.steps < max_steps:
        tools = box.tools()
        if not tools:  # nothing to call (a constrained model offered no choice): answer
            break
        outcome.steps += 1
        try:
            decision = await llm.complete_json(_step_messages(pack, describe(tools)),
                                               step_schema(tools), purpose="memory",
                                               name="step", max_tokens=300)
        except LLMError as exc:
            outcome.error = f"step {outcome.steps}: {exc}"
            break
        args = dict(decision["call"])
        name = str(args.pop("function"))
        if name == ANSWER:
            break
        heartbeat = bool(args.pop(HEARTBEAT, False))
        try:
            result = await box.call(name, args)
        except Exception as exc:  # a broken function is the model's failed call, not ours
            result = ToolResult(f"{type(exc).__name__}: {exc}", ok=False)
        text = render_call(name, args, result)
        pack.sections.append(Section("memory", f"call:{outcome.steps}:{name}", text,
                                     llm.count_tokens(text)))
        outcome.calls.append({"function": name, "args": args, "ok": result.ok,
                              "heartbeat": heartbeat, "result": result.text[:RESULT_CHARS]})
        if result.ok and not heartbeat:
            break
    return outcome
