from __future__ import annotations

import subprocess
import sys

import pytest

from memory.transcript import read_transcript
from tests.asked import asked
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


def test_unknown_model_exits_with_a_clear_message(demo_repo, tmp_path, capsys):
    # in this process (what `python -m tui.cli` runs is this `main`; the tests above hold
    # the process's exit status and stderr): telling the model unknown imports litellm, which
    # cost a fresh interpreter 6.6 of this test's 6.9 CPU s
    code = main(["ask", "hi", "--repo", str(demo_repo), "--model", "bogus-provider/x",
                 "--data-dir", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code == 2 and "engram: unknown model 'bogus-provider/x'" in err, err
    assert "Traceback" not in err


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


LOOP = "The price parsing logic is in money.py. It rounds the Decimal to cents. "


def test_ask_says_when_an_answer_was_stopped_for_repeating(demo_repo, tmp_path, script, capsys):
    script.push(LOOP * 10)
    code = main(["ask", "where is the price parsing?", "--repo", str(demo_repo),
                 "--model", "scripted/t", "--backend", "full", "--data-dir", str(tmp_path)])
    assert code == 0
    captured = capsys.readouterr()
    assert "stopped: the answer repeated itself" in captured.err
    assert captured.out.count("rounds the Decimal to cents") >= 2  # the copies streamed
    turn = read_transcript(next(tmp_path.glob("repos/*/sessions/*.jsonl"))).of_type("turn")[0]
    assert turn["assistant"] == LOOP.rstrip() and turn["meta"]["stopped"]


def test_plain_answers_say_no_stop(demo_repo, tmp_path, script, capsys):
    script.push("It is in money.py.")
    assert main(["ask", "where?", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "full", "--data-dir", str(tmp_path)]) == 0
    assert "stopped" not in capsys.readouterr().err


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


# -- headless --apply (memory/acting/workbench.py's Workbench) -------------------------------------
GREET = ("Done.\n@@@ EDIT app/db.py\n@@@ SEARCH\ndef connect(url, timeout=5):\n@@@ REPLACE\n"
         "def connect(url, timeout=10):\n@@@ END\n")
BROKEN = "@@@ EDIT app/db.py\n@@@ SEARCH\ndef nowhere():\n@@@ REPLACE\ndef x():\n@@@ END\n"


def acting_model(script, answers: dict[str, str], steps: list[str] | None = None) -> None:
    """The scripted model: the tool loop's steps in order (then answer), an answer by query."""
    import json

    steps = list(steps or [])

    def reply(messages):
        request = asked(messages)
        if request.step:
            return steps.pop(0) if steps else json.dumps({"call": {"function": "answer"}})
        return answers.get(request.query, "no edit")
    script.default = reply


def run_command(command: str) -> str:
    import json

    return json.dumps({"call": {"function": "run", "command": command,
                                "request_heartbeat": False}})


def headless(repo, data, *flags: str) -> list[str]:
    return ["chat", "--headless", "--repo", str(repo), "--model", "scripted/t",
            "--backend", "rag", "--data-dir", str(data), *flags]


def session_of(data):
    [path] = data.glob("repos/*/sessions/*.jsonl")
    return read_transcript(path)


def git_out(repo, *args: str) -> str:
    from tests.conftest import git

    return git(repo, *args)


def test_headless_apply_commits_each_answers_edits_and_says_what_it_did(
        demo_repo, tmp_path, script, monkeypatch, capsys):
    acting_model(script, {"longer timeout": GREET, "break it": BROKEN})
    monkeypatch.setattr(sys, "stdin", iter(["longer timeout\n", "break it\n", "just talk\n"]))
    data = tmp_path / "data"
    before = (demo_repo / "app/db.py").read_text()
    assert main(headless(demo_repo, data, "--apply")) == 0
    err = capsys.readouterr().err
    sha = git_out(demo_repo, "rev-parse", "HEAD").strip()
    assert f"edit applied: app/db.py (commit {sha[:10]})" in err
    assert "edit refused: nothing to apply: nothing was written" in err
    assert "block 1 (app/db.py):" in err and "not in the file" in err
    assert (demo_repo / "app/db.py").read_text() == before.replace("timeout=5", "timeout=10")
    assert git_out(demo_repo, "log", "-1", "--format=%s").strip() == "engram: longer timeout"
    assert git_out(demo_repo, "status", "--porcelain") == ""
    records = [(r.op, r.turn, r.ok) for r in session_of(data).edits]
    assert records == [("proposed", 0, True), ("applied", 0, True),
                       ("proposed", 1, False), ("refused", 1, False)]
    assert session_of(data).problems == []


def test_headless_apply_on_a_dirty_tree_refuses_that_file_and_keeps_the_others(
        demo_repo, tmp_path, script, monkeypatch, capsys):
    acting_model(script, {"longer timeout": GREET})
    mine = (demo_repo / "app/db.py").read_text() + "# my own work\n"
    (demo_repo / "app/db.py").write_text(mine)
    (demo_repo / "README.md").write_text("mine too\n")
    monkeypatch.setattr(sys, "stdin", iter(["longer timeout\n"]))
    assert main(headless(demo_repo, tmp_path / "d", "--apply")) == 0
    err = capsys.readouterr().err
    assert "2 path(s) have uncommitted changes" in err
    assert "edit refused:" in err and "(app/db.py): has uncommitted changes" in err
    assert (demo_repo / "app/db.py").read_text() == mine
    assert (demo_repo / "README.md").read_text() == "mine too\n"
    assert git_out(demo_repo, "log", "--format=%s").splitlines() == ["init"]


def test_headless_commands_run_only_with_allow_commands_and_in_the_sandbox(
        demo_repo, tmp_path, script, monkeypatch, capsys):
    command = "sh -c 'echo made-in-jail > made.txt; cat made.txt'"
    acting_model(script, {}, [run_command(command)])
    monkeypatch.setattr(sys, "stdin", iter(["make a file\n"]))
    assert main(headless(demo_repo, tmp_path / "a", "--apply")) == 0
    # not offered without --allow-commands: the step prompt lists no run tool, and a
    # call to it is outside the step's schema, so nothing is called
    steps = [asked(m).step for m in script.calls if "- read_file(" in asked(m).step]
    assert steps and not any("- run(" in text for text in steps)
    assert session_of(tmp_path / "a").tool_calls == []
    assert not (demo_repo / "made.txt").exists()
    script.calls.clear()
    acting_model(script, {}, [run_command(command)])
    monkeypatch.setattr(sys, "stdin", iter(["make a file\n"]))
    assert main(headless(demo_repo, tmp_path / "b", "--apply", "--allow-commands")) == 0
    steps = [asked(m).step for m in script.calls if "- read_file(" in asked(m).step]
    assert steps and all("- run(" in text for text in steps)
    [call] = session_of(tmp_path / "b").tool_calls
    assert call.ok and call.data["consent"] == "preallowed" and "made-in-jail" in call.result
    assert not (demo_repo / "made.txt").exists()  # the jail writes nothing back
    capsys.readouterr()


def test_ask_applies_with_the_same_flag(demo_repo, tmp_path, script, capsys):
    acting_model(script, {"longer timeout": GREET})
    assert main(["ask", "longer timeout", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--data-dir", str(tmp_path / "d"), "--apply"]) == 0
    assert "edit applied: app/db.py" in capsys.readouterr().err
    assert "timeout=10" in (demo_repo / "app/db.py").read_text()


@pytest.mark.parametrize(("flags", "message"), [
    (["chat", "--headless", "--allow-commands"], "--allow-commands needs --apply"),
    (["chat", "--apply"], "--apply needs --headless"),
    (["ask", "q", "--allow-commands"], "--allow-commands needs --apply"),
    (["chat", "--headless", "--apply", "--repo", "{plain}"], "not a git repository"),
])
def test_headless_apply_refuses_bad_input_with_exit_2(tmp_path, capsys, flags, message):
    (tmp_path / "plain").mkdir()
    args = [f.format(plain=tmp_path / "plain") for f in flags]
    assert main([*args, "--model", "scripted/t", "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "d").exists() or not list((tmp_path / "d").rglob("*.jsonl"))


@pytest.mark.slow
def test_headless_apply_with_the_real_small_model_never_half_writes(
        tmp_path, monkeypatch, capsys):
    from tests.conftest import make_repo

    source = 'def greet():\n    return "hi"\n'
    repo = make_repo(tmp_path / "tiny", {"greet.py": source, "README.md": "# tiny\n"})
    head = git_out(repo, "rev-parse", "HEAD").strip()
    monkeypatch.setattr(sys, "stdin", iter(["In greet.py, make greet return \"hello\" "
                                            "instead of \"hi\".\n"]))
    data = tmp_path / "data"
    code = main(["chat", "--headless", "--apply", "--repo", str(repo), "--model",
                 "local/smollm2", "--data-dir", str(data), "--max-tokens", "96"])
    err = capsys.readouterr().err
    transcript = session_of(data)
    print("edits:", [(r.op, r.ok, r.message[:120]) for r in transcript.edits])
    assert code == 0 and transcript.problems == []
    [turn] = transcript.turns
    assert turn.ok and turn.user.startswith("In greet.py")
    assert git_out(repo, "status", "--porcelain") == ""  # nothing half-written, nothing left
    applied = [r for r in transcript.edits if r.op == "applied"]
    if applied:
        [record] = applied
        assert git_out(repo, "rev-parse", "HEAD").strip() == record.commit
        assert git_out(repo, "rev-parse", "HEAD^").strip() == head
        assert f"edit applied: {', '.join(record.paths)}" in err
    else:
        assert git_out(repo, "rev-parse", "HEAD").strip() == head
        assert (repo / "greet.py").read_text() == source
        proposed = [r for r in transcript.edits if r.op == "proposed"]
        assert all(not r.ok for r in proposed) and ("edit refused" in err) == bool(proposed)
