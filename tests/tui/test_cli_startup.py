"""A startup that cannot succeed says why and exits non-zero before the app opens."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def engram(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_CONFIG": str(home / "c.json"),
           "TERM": "xterm-256color"}
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=ROOT, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("case", ["missing", "not-git", "bad-data-dir", "bad-backend",
                                  "resume-path-id", "resume-unknown-id"])
def test_a_startup_that_cannot_succeed_exits_before_the_app(case, demo_repo, tmp_path):
    args = {
        "missing": [str(tmp_path / "nope")],
        "not-git": [str(tmp_path)],
        "bad-data-dir": [str(demo_repo), "--data-dir", str(tmp_path / "a-file")],
        "bad-backend": [str(demo_repo), "--backend", "nosuch"],
        "resume-path-id": [str(demo_repo), "--resume", "../../x"],
        "resume-unknown-id": [str(demo_repo), "--resume", "20240101-000000-abcdef"],
    }[case]
    (tmp_path / "a-file").write_text("not a folder")
    done = engram(*args, home=tmp_path / "home")
    expected = {"missing": "no such folder", "not-git": "not a git repository",
                "bad-data-dir": "cannot write the data dir", "bad-backend": "unknown backend",
                "resume-path-id": "'../../x' is not a session id",
                "resume-unknown-id": "no recorded session '20240101-000000-abcdef'"}
    assert done.returncode == 2
    assert done.stderr.startswith("engram: ") and expected[case] in done.stderr
    assert "\x1b[" not in done.stdout  # the app never drew a frame


def test_help_lists_the_app_options_and_replay(tmp_path):
    done = engram("--help", home=tmp_path)
    assert done.returncode == 0
    for word in ("-c [PATH]", "--resume", "engram replay"):
        assert word in done.stdout
