"""The repository tools on real git repositories in tmp dirs: read_file, grep,
list_files, search_code, and the consent policy in front of run."""

from __future__ import annotations

import os

import pytest

from memory.acting.tools.box import RepoTools
from memory.acting.tools.consent import ConsentPolicy, Decision
from memory.acting.tools.grep import grep
from memory.acting.tools.listing import list_files
from memory.acting.tools.read import MAX_LINES, read_file
from memory.acting.tools.run import CommandResult, Limits, RunTool
from memory.acting.tools.search import search_code
from memory.index.repo import RepoIndex
from memory.store import Store

from ...conftest import DB, FORMS, make_repo

LONG = "".join(f"line {i}\n" for i in range(1, 1001))


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo", {
        "app/forms.py": FORMS, "app/db.py": DB, "docs/long.txt": LONG,
        "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0binary", ".gitignore": ".env\nbuild/\n",
        "big.txt": "x" * 1_100_000})
    (root / ".env").write_text("API_KEY=do-not-read\n")
    (root / "notes.md").write_text("untracked but not ignored: connect\n")
    (tmp_path / "outside.txt").write_text("secret outside\n")
    os.symlink(tmp_path / "outside.txt", root / "link.txt")
    return root


def test_read_file_numbers_lines_and_reads_a_range(repo):
    result = read_file(repo, "docs/long.txt", 10, 12)
    assert result.ok
    assert result.text.splitlines() == ["docs/long.txt, lines 10-12 of 1000:",
                                        "10  line 10", "11  line 11", "12  line 12",
                                        "[988 more lines: read_file with start=13]"]


def test_read_file_stops_at_its_line_limit_and_says_where_to_go_on(repo):
    result = read_file(repo, "docs/long.txt")
    assert f"lines 1-{MAX_LINES} of 1000" in result.text
    assert f"read_file with start={MAX_LINES + 1}" in result.text
    assert f"line {MAX_LINES + 1}\n" not in result.text


@pytest.mark.parametrize("path, says", [
    ("../outside.txt", "climbs out"),
    ("/etc/passwd", "absolute path"),
    ("~/.ssh/id_rsa", "absolute path"),
    ("link.txt", "symlink"),
    (".git/config", "inside .git"),
    ("logo.png", "binary"),
    ("big.txt", "over the 1,000,000-byte limit"),
    (".env", "git ignores"),
    ("app", "not a regular file"),
    ("app/missing.py", "No file"),
])
def test_read_file_refuses_with_a_clear_message(repo, path, says):
    result = read_file(repo, path)
    assert not result.ok and says in result.text
    assert "do-not-read" not in result.text and "secret outside" not in result.text


def test_read_file_past_the_end_and_an_untracked_file(repo):
    assert "past its end" in read_file(repo, "app/db.py", 500).text
    assert "untracked but not ignored" in read_file(repo, "notes.md").text


def test_grep_finds_lines_with_their_place_and_narrows_by_glob(repo):
    result = grep(repo, r"def (connect|migrate)")
    assert result.ok
    assert "app/db.py:" in result.text and "def connect(url, timeout=5):" in result.text
    assert grep(repo, "def connect", "*.txt").text.startswith("No line matches")
    assert "app/db.py" in grep(repo, "def connect", "app/*").text


def test_grep_bounds_its_output_and_skips_binary_and_untracked_files(repo):
    result = grep(repo, "line")
    assert result.text.startswith("1000 matching lines") or "matching lines" in result.text
    assert "the first 100 shown" in result.text
    assert len(result.text.splitlines()) <= 101
    assert "logo.png" not in grep(repo, "binary").text
    assert "notes.md" not in grep(repo, "untracked").text  # tracked files only


def test_grep_says_what_is_wrong_with_a_pattern(repo):
    assert not grep(repo, "(unclosed").ok
    assert not grep(repo, "").ok
    assert "Refused" in grep(repo, "x", "../*").text


def test_list_files_by_glob_without_ignored_files(repo):
    listed = list_files(repo).text.splitlines()
    assert "app/forms.py" in listed and "notes.md" in listed
    assert ".env" not in listed and not any(n.startswith(".git/") for n in listed)
    assert list_files(repo, "*.py").text.splitlines()[1:] == ["app/db.py", "app/forms.py"]
    assert list_files(repo, "docs/*").text.splitlines()[1:] == ["docs/long.txt"]
    assert list_files(repo, "*.rs").text == "No file matching '*.rs'."


def test_search_code_finds_definitions_through_the_index(repo, tmp_path, embedder):
    index = RepoIndex(repo, Store(tmp_path / "data"), embedder)
    index.refresh()
    result = search_code(index, "open a database connection with a timeout", 3)
    assert result.ok and result.text.startswith("1. app/db.py::connect (function")
    assert "def connect(url, timeout=5):" in result.text
    assert not search_code(index, "  ").ok


async def test_the_toolbox_offers_search_and_run_only_when_it_has_them(repo):
    box = RepoTools(repo)
    assert [t.name for t in box.tools()] == ["read_file", "grep", "list_files"]
    assert (await box.call("run", {"command": "ls"})).text == "No tool 'run'."
    result = await box.call("read_file", {"path": "app/db.py", "start": 1, "end": 2})
    assert result.ok and "app/db.py, lines 1-2" in result.text
    constrained = RepoTools(repo, constrained=True).tools()
    assert "app/forms.py" in constrained[0].parameters["path"]["enum"]
    assert constrained[2].parameters["glob"]["enum"] == [
        "", "*.md", "*.png", "*.py", "*.txt", "app/*", "docs/*"]


class RecordingJail:
    """Stands in for the jail where only the consent logic is tested (the jail itself:
    test_tools_jail.py)."""

    def __init__(self) -> None:
        self.ran: list[list[str]] = []

    def available(self) -> str | None:
        return None

    def run(self, root, argv, limits):
        self.ran.append(argv)
        return CommandResult(tuple(argv), 0, False, "ran\n", "", 0.1)


async def test_consent_asked_per_command_remembered_for_the_session_or_denied(repo):
    asked: list[str] = []
    answers = [Decision.ONCE, Decision.SESSION, Decision.DENY]

    async def asker(command: str) -> Decision:
        asked.append(command)
        return answers.pop(0)

    jail = RecordingJail()
    tool = RunTool(repo, ConsentPolicy(asker), jail, Limits(timeout=5))
    once = await tool("pytest -q")
    assert once.ok and once.meta["consent"] == "asked-once" and "ran" in once.text
    session = await tool("pytest   -q")  # the same words: asked again (ONCE was once)
    assert session.meta["consent"] == "asked-session"
    again = await tool("pytest -q")
    assert again.meta["consent"] == "session" and asked == ["pytest -q", "pytest -q"]
    denied = await tool("rm -rf /")
    assert not denied.ok and denied.meta["consent"] == "denied"
    assert "denied this command" in denied.text
    assert jail.ran == [["pytest", "-q"]] * 3


async def test_without_an_asker_nothing_runs_unless_allowed_in_advance(repo):
    jail = RecordingJail()
    refused = await RunTool(repo, ConsentPolicy(), jail)("tests")
    assert not refused.ok and refused.meta["consent"] == "no-asker" and jail.ran == []
    allowed = await RunTool(repo, ConsentPolicy.preallowed(), jail)("tests")
    assert allowed.meta["consent"] == "preallowed"
    assert jail.ran == [["python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]]


async def test_a_failing_asker_and_an_unusable_command_run_nothing(repo):
    async def broken(command: str) -> Decision:
        raise RuntimeError("the dialog went away")

    jail = RecordingJail()
    assert (await RunTool(repo, ConsentPolicy(broken), jail)("ls")).meta["consent"] == \
        "asker-failed"
    tool = RunTool(repo, ConsentPolicy.preallowed(), jail)
    assert "cannot be split" in (await tool("echo 'unclosed")).text
    assert "control character" in (await tool("ls\x1b[2J")).text
    assert jail.ran == []


async def test_no_jail_no_run(repo):
    class NoJail(RecordingJail):
        def available(self) -> str | None:
            return "bwrap is not installed"

    jail = NoJail()
    result = await RunTool(repo, ConsentPolicy.preallowed(), jail)("ls")
    assert not result.ok and "only in the sandbox" in result.text and jail.ran == []


def test_tool_records_are_typed_and_bad_ones_refused():
    from memory._checks import RecordError
    from memory.records import ToolRecord, parse_record

    record = parse_record({"type": "tool", "turn": 2, "step": 1, "function": "grep",
                           "args": {"pattern": "x", "glob": ""}, "ok": True,
                           "result": "No line matches 'x'.", "consent": "session"})
    assert isinstance(record, ToolRecord) and record.function == "grep"
    assert record.args == {"pattern": "x", "glob": ""} and record.data["consent"] == "session"
    for bad in ({"ok": "yes"}, {"turn": -1}, {"function": 3}, {"args": []}, {"step": None}):
        with pytest.raises(RecordError):
            parse_record({"type": "tool", "turn": 0, "step": 1, "function": "grep",
                          "args": {}, **bad})


@pytest.mark.parametrize("caller", [{"COLUMNS": "400"}, {"CI": "true"}],
                         ids=["wide-terminal", "ci"])
def test_a_long_pytest_summary_keeps_every_failed_id_in_the_tail(tmp_path, caller):
    """A real pytest run of forty failing tests whose short summary alone is longer than
    the tail the model is shown: on a 400-column terminal (long lines), and under ``CI``
    (pytest then prints each message whole, over several lines). The messages are
    shortened, then their continuation lines left out, so that every failed id stays in
    view (and reaches cards' reading of the run)."""
    import os
    import subprocess
    import sys

    from memory.acting.tools.run import TAIL_CHARS, tail
    from memory.backends.cards import testruns

    (tmp_path / "test_wide.py").write_text("".join(
        f"def test_v{i}():\n    assert {{'v': {i}}} == {{'v': {i + 1}}}, "
        f"'the value of v{i} is off ' * 20\n\n\n"
        for i in range(40)))
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "CI", "BUILD_NUMBER", "PYTEST_ADDOPTS")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env={**env, **caller}, capture_output=True, text=True,
                          timeout=120)
    summary = done.stdout[done.stdout.index("short test summary info"):]
    assert summary.count("\nFAILED") == 40 and len(summary) > 2 * TAIL_CHARS
    shown = tail(done.stdout)
    assert len(shown) <= TAIL_CHARS + 60 and shown.rstrip().endswith(done.stdout.split()[-1])
    run = testruns.parse(shown)
    assert run is not None and run.counts["failed"] == 40
    assert sorted(f.test for f in run.failures) == sorted(
        f"test_wide.py::test_v{i}" for i in range(40))
    assert tail("short output") == "short output"
