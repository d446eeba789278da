from __future__ import annotations

import subprocess
import sys

import pytest

from memory.transcript import read_transcript
from tui.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_help_lists_the_subcommands():
    result = run_cli("--help")
    assert result.returncode == 0 and "usage: engram" in result.stdout
    for name in ("ask", "chat", "index", "memories", "backends"):
        assert name in result.stdout


def test_backends_are_listed():
    result = run_cli("backends")
    assert result.returncode == 0
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert {"full", "empty", "rag"} <= set(names)


def test_unknown_backend_exits_with_a_clear_message(demo_repo, tmp_path):
    result = run_cli("ask", "hi", "--repo", str(demo_repo), "--backend", "nope",
                     "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 2
    assert "unknown backend 'nope'" in result.stderr and "rag" in result.stderr
    assert "Traceback" not in result.stderr


def test_not_a_git_repo_exits_with_a_clear_message(tmp_path):
    (tmp_path / "plain").mkdir()
    result = run_cli("index", "--repo", str(tmp_path / "plain"), "--data-dir", str(tmp_path))
    assert result.returncode == 2 and "not a git repository" in result.stderr


def test_unknown_model_exits_with_a_clear_message(demo_repo, tmp_path):
    result = run_cli("ask", "hi", "--repo", str(demo_repo), "--model", "bogus-provider/x",
                     "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 2 and "unknown model" in result.stderr


def test_headless_chat_answers_each_line_and_records_a_session(
        demo_repo, tmp_path, script, monkeypatch, capsys):
    script.default = lambda messages: "echo: " + messages[-1]["content"]
    monkeypatch.setattr(sys, "stdin", iter(["first question\n", "\n", "second question\n"]))
    data = tmp_path / "data"
    code = main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "rag", "--data-dir", str(data)])
    assert code == 0
    out = capsys.readouterr().out
    assert "echo: first question" in out and "echo: second question" in out
    sessions = list(data.glob("repos/*/sessions/*.jsonl"))
    assert len(sessions) == 1
    transcript = read_transcript(sessions[0])
    assert transcript.session.backend == "rag"
    assert transcript.session.repo == str(demo_repo.resolve())
    assert len(transcript.session.head) == 40
    assert [t["user"] for t in transcript.of_type("turn")] == ["first question",
                                                               "second question"]


def test_index_command_reports_a_summary(demo_repo, tmp_path, capsys):
    assert main(["index", "--repo", str(demo_repo), "--data-dir", str(tmp_path / "d")]) == 0
    assert "4 re-indexed" in capsys.readouterr().out
    assert main(["index", "--repo", str(demo_repo), "--data-dir", str(tmp_path / "d")]) == 0
    assert "0 re-indexed" in capsys.readouterr().out


def test_timeout_comes_from_the_flag_else_the_config_file(
        demo_repo, tmp_path, script, monkeypatch, capsys):
    import json

    import memory.session
    from tui.cli import CLIError, llm_timeout

    config = tmp_path / "config.json"
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    assert llm_timeout(None) == 180.0
    config.write_text(json.dumps({"timeout": 42}))
    assert llm_timeout(None) == 42.0 and llm_timeout(7.5) == 7.5
    config.write_text(json.dumps({"timeout": "never"}))
    with pytest.raises(CLIError, match="'timeout': a timeout is a positive number"):
        llm_timeout(None)
    config.write_text(json.dumps({"timeout": 42}))
    seen = []
    real = memory.session.open_session

    def spy(options, progress=None):
        session = real(options, progress)
        seen.append(session.agent.llm.config.timeout)
        return session

    monkeypatch.setattr(memory.session, "open_session", spy)
    args = ["ask", "hi", "--repo", str(demo_repo), "--model", "scripted/t",
            "--data-dir", str(tmp_path / "d")]
    assert main(args) == 0 and main([*args, "--timeout", "9"]) == 0
    assert seen == [42.0, 9.0]
    with pytest.raises(SystemExit):
        main([*args, "--timeout", "0"])
    assert "positive number of seconds" in capsys.readouterr().err
