"""The one redactor: secrets never reach a sink (transcripts, memory stores, logs, errors).

A secret is the value of an environment variable named like one (``*KEY*``, ``*TOKEN*``,
``*SECRET*``, ...; 8 characters or more) or a token-shaped string (OpenAI/Anthropic
``sk-...``, GitHub ``ghp_...``, Slack ``xox.-...``, AWS ``AKIA...``, Google ``AIza...``,
``Bearer ...``). Every sink calls ``redact`` (text) or ``redact_obj`` (JSON-shaped data);
``install_log_redaction`` makes every log record pass through it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)
_SECRET_SHAPES = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic style keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|(?i:bearer)\s+[A-Za-z0-9._\-]{20,})"
)


def secret_values(env: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables named like secrets (long enough to be real),
    longest first (so a key containing another is replaced whole)."""
    env = dict(os.environ) if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``; ``secrets``: the values to
    remove besides the token shapes (default: the environment's, read now)."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return _SECRET_SHAPES.sub(REDACTED, text)


def redact_obj(obj: Any, secrets: Iterable[str] | None = None) -> Any:
    """A copy of JSON-shaped ``obj`` with every string redacted (keys of objects too)."""
    values = secret_values() if secrets is None else list(secrets)
    return _redact_obj(obj, values)


def _redact_obj(obj: Any, secrets: list[str]) -> Any:
    if isinstance(obj, str):
        return redact(obj, secrets)
    if isinstance(obj, dict):
        return {_redact_obj(k, secrets): _redact_obj(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_redact_obj(v, secrets) for v in obj]
    return obj


def install_log_redaction() -> None:
    """Every log record made from now on (any logger, any handler) carries a redacted
    message and traceback. Idempotent."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "redacting", False):
        return

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: logging reports it at emit time
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return record

    make.redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make)
