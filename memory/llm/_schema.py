"""JSON Schema helpers for memory/llm/client.py's structured-output path.

Validation (jsonschema), the schema written into a prompt for providers without a
structured mode, the counters of every structured call, and the error a caller
gets when an answer never validated. No litellm here.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, fields
from typing import Any

from memory.llm.lenient_json import MalformedJSON, parse_json

# How a structured call reached its model (memory/llm/structured.py says what each sends):
# the JSON-Schema response format, llama.cpp's json_object with a schema, Ollama's
# format schema, JSON mode, the prompt alone, or the embedded model's grammar.
MODES = ("schema", "schema_object", "ollama_format", "json", "prompt", "grammar")


class SchemaError(ValueError):
    """A parsed answer does not validate against the schema."""


def validate(value: Any, schema: dict[str, Any]) -> None:
    """Raise ``SchemaError`` with a short path-and-reason message if ``value`` is invalid."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise SchemaError(f"at {where}: {error.message[:200]}")


# Keywords some providers' strict JSON-Schema modes reject; they are dropped from what
# the provider sees and still checked here after parsing.
_UNPORTABLE = frozenset({"minLength", "maxLength", "minItems", "maxItems", "pattern",
                         "format", "minimum", "maximum", "uniqueItems"})


def portable(schema: Any) -> Any:
    """``schema`` without the keywords strict provider modes refuse (a copy)."""
    if isinstance(schema, dict):
        return {k: portable(v) for k, v in schema.items() if k not in _UNPORTABLE}
    if isinstance(schema, list):
        return [portable(v) for v in schema]
    return schema


def schema_instruction(schema: dict[str, Any]) -> str:
    """The schema as prompt text, for models that cannot be given it any other way."""
    return ("Answer with one JSON value only, no prose and no code fence. It must "
            "validate against this JSON Schema:\n" + json.dumps(schema, separators=(",", ":")))


def parse_answer(text: str, schema: dict[str, Any]) -> tuple[Any, bool]:
    """The answer's JSON value, validated; and whether the lenient parser was needed.

    Raises ``MalformedJSON`` or ``SchemaError``."""
    lenient = False
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = parse_json(text)  # raises MalformedJSON
        lenient = True
    validate(value, schema)
    return value, lenient


def retry_message(error: Exception) -> str:
    """What the model is told before its one corrective retry."""
    return (f"That answer was not usable: {error}. Answer again with the JSON value "
            "only, valid against the schema.")


@dataclass
class StructuredStats:
    """Counters of structured calls, shared by every ``LLM`` that shares a ledger."""

    calls: int = 0
    schema: int = 0  # the provider's JSON-Schema mode
    schema_object: int = 0  # llama.cpp's json_object with a schema
    ollama_format: int = 0  # Ollama's format schema
    json: int = 0  # JSON mode, schema in the prompt
    prompt: int = 0  # schema in the prompt only
    grammar: int = 0  # constrained decoding on the embedded model
    refused: int = 0  # requests the endpoint refused for their structured mode (stepped down)
    parsed: int = 0  # calls that ended with a valid value
    first_try: int = 0  # ... without a retry
    retries: int = 0  # corrective retries asked
    lenient: int = 0  # answers that needed the lenient parser
    failed: int = 0  # calls that raised StructuredOutputError
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for key, n in counts.items():
                setattr(self, key, getattr(self, key) + n)

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}

    def since(self, before: dict[str, int]) -> dict[str, int]:
        now = self.as_dict()
        return {k: now[k] - before.get(k, 0) for k in now if now[k] - before.get(k, 0)}

    def modes(self) -> dict[str, int]:
        """The structured calls per mode that answered them (modes never used left out)."""
        now = self.as_dict()
        return {mode: now[mode] for mode in MODES if now[mode]}


__all__ = ["MODES", "MalformedJSON", "SchemaError", "StructuredStats", "parse_answer", "portable",
           "retry_message", "schema_instruction", "validate"]
