"""Claude Code, Codex CLI and Aider sessions as recorded sources (hand-written fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.errors import SourceError
from replay.core.sources import load_source
from replay.sessions.foreign import read_foreign, sniff
from replay.sessions.source import Recorded

FIXTURES = Path(__file__).parents[1] / "fixtures" / "foreign"
CLAUDE = FIXTURES / "claude-session.jsonl"
CODEX = FIXTURES / "rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"
AIDER = FIXTURES / ".aider.chat.history.md"


def load(path: Path) -> Recorded:
    sources = load_source(path)
    assert len(sources) == 1 and isinstance(sources[0], Recorded)
    return sources[0]


def test_claude_code_session_gives_the_developers_turns():
    source = load(CLAUDE)
    assert source.queries == ("Where is the tax rate defined?",
                              "Now make Cart.total return 0.0 for an empty cart.")
    assert source.origin == "claude-code 2.0.61" and source.repo == "/home/dev/shop"
    assert source.id == "5f1c2a9e-3b7d-4c1e-9a2f-0d6e8b4c7a11"
    first, second = source.context
    assert first[0] == 'tool call Grep: {"pattern": "TAX ="}'
    assert first[1] == "tool result: shop/prices.py:4:TAX = 0.2"
    assert any(c.startswith("Caveat:") for c in first)  # a meta record: context
    assert any("<command-name>/cost" in c for c in first)  # a slash command: context
    assert second[0].startswith("tool call Edit:")
    assert second[1] == "(sub-agent prompt) check the tests"  # a side chain: context
    assert source.skipped == 2  # the torn line and the record of an unknown type


def test_codex_rollout_gives_the_developers_turns():
    source = load(CODEX)
    assert source.queries == ("Run the cart tests and tell me what fails.",
                              "Fix it so an empty cart costs 0.0.")
    assert source.origin == "codex 0.46.0" and source.repo == "/home/dev/shop"
    assert source.context[0][0].startswith('tool call shell: {"command":["pytest"')
    assert source.context[0][1].startswith("tool result: ")
    assert "1 failed, 1 passed" in source.context[0][1]
    assert source.context[1] == ("tool call apply_patch: *** Begin Patch\n*** Update File: "
                                 "shop/cart.py\n*** End Patch",
                                 "tool result: Success. Updated shop/cart.py")
    assert source.skipped == 2  # a line that is not JSON, an item of an unknown type
    session = read_foreign(CODEX, "codex")
    assert session.preamble[0].startswith("<environment_context>")  # injected: not a turn


def test_older_codex_rollouts_without_payloads_are_read(tmp_path):
    path = tmp_path / "rollout-2025-05-01-abc.jsonl"
    rows = [{"id": "abc", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Add a docstring to with_tax."}]},
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
            {"record_type": "state"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    source = load(path)
    assert source.queries == ("Add a docstring to with_tax.",) and source.id == "abc"
    assert source.context == (("tool call shell: {}",),) and source.skipped == 1


def test_aider_history_gives_the_developers_turns():
    source = load(AIDER)
    assert source.queries == (
        "What does Cart.total do with an empty cart?",
        "Make it return 0.0 explicitly.\nKeep the tax for non-empty carts.",
        "Is the rounding done before or after tax?")  # /ask carries a question
    assert source.origin == "aider 2025-06-19 14:32:16"
    assert source.context[1] == ("Applied edit to shop/cart.py",
                                 "Commit 1a2b3c4 fix: Return 0.0 for an empty cart",
                                 "command: /run pytest -q", "2 passed",
                                 "Add command output to the chat? (Y)es/(N)o [Yes]: y")
    session = read_foreign(AIDER, "aider")
    assert "command: /add shop/cart.py" in session.preamble


@pytest.mark.parametrize("name,content,message", [
    ("bad-claude.jsonl", '{"type": "user", "sessionId": "s", "message": 7}\n',
     "no user turn found in this claude-code transcript"),
    ("rollout-bad.jsonl", '{"type": "session_meta", "payload": {"id": "x"}}\n\x00\x01garbage\n',
     "no user turn found in this codex transcript (2 records, 1 skipped)"),
    (".aider.chat.history.md", "just some notes, not a chat history\n",
     "corrupt aider chat history"),
])
def test_a_corrupt_foreign_file_gives_a_clear_error(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(SourceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_source(path)


def test_a_binary_file_named_like_a_session_is_refused(tmp_path):
    path = tmp_path / "rollout-x.jsonl"
    path.write_bytes(b'{"type": "session_meta", "payload": {}}\n\xff\xfe\x00garbage')
    assert sniff(path) == "codex"
    with pytest.raises(SourceError, match="not a text file"):
        load_source(path)


def test_engram_transcripts_are_not_taken_for_foreign_ones(tmp_path):
    from memory.transcript import TranscriptWriter
    from memory.types import Turn

    path = tmp_path / "session.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write({"type": "session", "id": "own", "repo": ""})
        writer.write(Turn(0, "Where is the tax rate?", "old").to_record())
    assert sniff(path) is None
    assert load(path).origin == "engram"


def test_secrets_in_tool_output_are_redacted(tmp_path):
    key = "sk-" + "a1B2" * 12
    row = {"type": "user", "sessionId": "s", "cwd": "/x", "message": {"role": "user",
           "content": [{"type": "text", "text": "Deploy it."}]}}
    result = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": f"OPENAI_API_KEY={key}"}]}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps(result) + "\n")
    source = load(path)
    assert key not in json.dumps(source.context) and source.context[0]
