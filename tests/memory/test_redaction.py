"""No secret at rest: a key fed through a headless session with a memory backend appears
in no file under the data dir and nowhere on stderr (transcript, LanceDB memory tables,
provider errors, logs all pass through ``memory.redact``)."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from memory.llm.client import import_litellm
from memory.redact import REDACTED, install_log_redaction, redact
from tui.cli import main

OPENAI_KEY = "sk-" + "Zq7" * 13 + "x"  # sk- and 40 characters
AWS_KEY = "AKIA" + "J7QW2ZK4XN5PL3MB"
ENV_SECRET = "hunter2-correct-horse-battery"
SECRETS = (OPENAI_KEY, AWS_KEY, ENV_SECRET)


@pytest.fixture(autouse=True)
def _log_factory():
    """``main`` installs the redacting log-record factory for the process; put the
    original back for the other tests."""
    factory = logging.getLogRecordFactory()
    yield
    logging.setLogRecordFactory(factory)


def extract(*facts: str) -> str:
    return json.dumps({"facts": list(facts)})


def ops(*operations: dict) -> str:
    return json.dumps({"operations": [{"memory": -1, "text": "", **op} for op in operations]})


def test_a_key_fed_through_a_session_is_nowhere_at_rest(
        demo_repo, tmp_path, script, monkeypatch, capfd, caplog):
    monkeypatch.setenv("MY_SERVICE_PASSWORD", ENV_SECRET)
    litellm = import_litellm()
    real = litellm.acompletion

    async def provider(**kwargs):  # a provider whose error body echoes the key
        if "trigger the provider error" in str(kwargs["messages"][-1]["content"]):
            raise litellm.AuthenticationError(
                message=f"Incorrect API key provided: {OPENAI_KEY}. Header: {AWS_KEY}",
                model="scripted/t", llm_provider="scripted")
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", provider)
    fact = (f"The developer prefers tabs; their OpenAI key is {OPENAI_KEY}, AWS {AWS_KEY}, "
            f"password {ENV_SECRET}.")
    script.push(f"Noted, your key {OPENAI_KEY} is safe with me.", extract(fact),
                ops({"fact": 0, "op": "ADD"}))
    script.push(f"Updating: {AWS_KEY}", extract(f"The developer rotated {OPENAI_KEY}."),
                ops({"fact": 0, "op": "UPDATE", "memory": 0,
                     "text": f"The developer prefers tabs and rotated {OPENAI_KEY}."}))
    monkeypatch.setattr(sys, "stdin", iter([
        f"I prefer tabs. My key is {OPENAI_KEY} and AWS {AWS_KEY}, password {ENV_SECRET}\n",
        f"I rotated {OPENAI_KEY}\n",
        f"trigger the provider error {OPENAI_KEY}\n"]))
    data = tmp_path / "data"
    code = main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "mem0", "--data-dir", str(data)])
    logging.getLogger("engram.test").warning("a log line with %s and %s", AWS_KEY, ENV_SECRET)
    assert code == 1  # the third answer failed, and said so
    err = capfd.readouterr().err
    assert "the answer failed" in err and "authentication failed" in err
    files = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.suffix == ".lance" for p in files) and any(p.suffix == ".jsonl" for p in files)
    # the stores hold the memory's text (so a key there would be found), redacted
    assert any(b"prefers tabs" in p.read_bytes() for p in files if "memor" in str(p))
    assert "a log line with [REDACTED] and [REDACTED]" in caplog.text
    for secret in SECRETS:
        assert secret not in err and secret not in caplog.text
        for path in files:
            assert secret.encode() not in path.read_bytes(), f"{secret[:6]}... in {path}"
    assert any(REDACTED.encode() in p.read_bytes() for p in files if "memor" in str(p))


def test_logs_are_redacted_wherever_they_go(caplog):
    install_log_redaction()
    install_log_redaction()  # idempotent
    log = logging.getLogger("engram.redaction")
    log.warning("key %s in an argument", OPENAI_KEY)
    try:
        raise ValueError(f"bad key {AWS_KEY}")
    except ValueError:
        log.exception("failed with %s", "details")
    assert OPENAI_KEY not in caplog.text and AWS_KEY not in caplog.text
    assert "key [REDACTED] in an argument" in caplog.text
    assert "ValueError: bad key [REDACTED]" in caplog.text


def test_redact_replaces_environment_secrets_and_token_shapes(monkeypatch):
    monkeypatch.setenv("SOME_API_TOKEN", ENV_SECRET)
    assert redact(f"{ENV_SECRET} {OPENAI_KEY} {AWS_KEY} plain") == (
        f"{REDACTED} {REDACTED} {REDACTED} plain")
