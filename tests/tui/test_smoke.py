"""The real app in a pseudo-terminal, answering through the real local/smollm2 (its tool
loop first; a command it asks for is denied at the consent modal)."""

from __future__ import annotations

import os
import sys
import time

import pexpect
import pytest

from memory.transcript import read_transcript


@pytest.mark.slow
def test_real_app_answers_in_a_terminal(demo_repo, tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "TERM": "xterm-256color", "ENGRAM_CONFIG": str(tmp_path / "c.json"),
           "HF_HUB_OFFLINE": "1"}
    child = pexpect.spawn(
        sys.executable, ["-m", "tui.cli", str(demo_repo), "--model", "local/smollm2",
                         "--data-dir", str(data), "--max-tokens", "16"],
        env=env, dimensions=(40, 120), timeout=120, encoding="utf-8", codec_errors="replace")
    try:
        child.expect("local/smollm2")  # the status bar: the session is open
        deadline = time.time() + 120
        sessions = []
        while time.time() < deadline and not sessions:
            sessions = list(data.glob("repos/*/sessions/*.jsonl"))
            time.sleep(0.5)
        assert sessions, "no session was recorded"
        child.send("What does migrate do?")
        child.send("\r")
        turns: list[dict] = []
        deadline = time.time() + 480  # the tool loop's steps come first
        while time.time() < deadline and not turns:
            # a command the model asks for waits for consent: denied here (d)
            if child.expect([pexpect.TIMEOUT, pexpect.EOF, r"in the sandbox\?"], timeout=1) == 2:
                child.send("d")
            turns = read_transcript(sessions[0]).of_type("turn")
        assert turns, "no answer within 480 s"
        assert turns[0]["user"] == "What does migrate do?"
        assert turns[0]["assistant"].strip() and "error" not in turns[0]
        child.sendcontrol("q")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
