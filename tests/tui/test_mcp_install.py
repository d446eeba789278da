"""``engram mcp install claude|codex``: printed, written once, other entries kept."""

from __future__ import annotations

import json
import tomllib

from tests.conftest import make_repo
from tui.cli import main


def test_claude_registration_keeps_other_servers_and_hooks_and_is_idempotent(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    other = {"mcpServers": {"fs": {"command": "fs-server", "args": ["--root", "."]}},
             "extra": True}
    (repo / ".mcp.json").write_text(json.dumps(other))
    (repo / ".claude").mkdir()
    theirs = {"type": "command", "command": "echo hi"}
    (repo / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(ls)"]},
         "hooks": {"UserPromptSubmit": [{"hooks": [theirs]}], "Stop": []}}))

    assert main(["mcp", "install", "claude", "--repo", str(repo)]) == 0
    assert '"engram"' in capsys.readouterr().out
    assert json.loads((repo / ".mcp.json").read_text()) == other  # printing writes nothing

    for _ in range(2):
        assert main(["mcp", "install", "claude", "--repo", str(repo), "--write",
                     "--hook"]) == 0
    out = capsys.readouterr().out
    assert "already registered" in out.split("written")[-1]
    data = json.loads((repo / ".mcp.json").read_text())
    assert data["mcpServers"]["fs"] == other["mcpServers"]["fs"] and data["extra"] is True
    engram = data["mcpServers"]["engram"]
    assert engram["args"][-2:] == ["mcp", str(repo)]
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(ls)"]} and settings["hooks"]["Stop"] == []
    groups = settings["hooks"]["UserPromptSubmit"]
    assert groups[0] == {"hooks": [theirs]} and len(groups) == 2
    assert "recall - --brief" in groups[1]["hooks"][0]["command"]


CODEX = """# my codex settings
model = "o4-mini"  # keep this comment

[mcp_servers.fs]
command = "fs-server"
args = ["--root", "."]

[profiles.fast]
model = "o4-mini"
"""


def test_codex_registration_writes_one_table_and_keeps_the_rest_byte_for_byte(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX)
    argv = ["mcp", "install", "codex", "--repo", str(repo), "--config", str(config), "--write"]
    assert main(argv) == 0
    first = config.read_text()
    assert first.startswith(CODEX)
    data = tomllib.loads(first)
    assert data["mcp_servers"]["fs"] == {"command": "fs-server", "args": ["--root", "."]}
    assert data["mcp_servers"]["engram"]["args"][-2:] == ["mcp", str(repo)]
    assert main(argv) == 0 and config.read_text() == first  # idempotent
    # an engram entry of another repository is replaced in place, the rest untouched
    moved = first.replace(str(repo), "/elsewhere")
    config.write_text(moved)
    assert main(argv) == 0 and config.read_text() == first
    assert "already registered" in capsys.readouterr().out


def test_install_refuses_a_broken_config_and_writes_nothing(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / ".mcp.json").write_text("{not json")
    assert main(["mcp", "install", "claude", "--repo", str(repo), "--write"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert (repo / ".mcp.json").read_text() == "{not json"
    config = tmp_path / "config.toml"
    config.write_text("[broken\n")
    assert main(["mcp", "install", "codex", "--repo", str(repo), "--config", str(config),
                 "--write"]) == 2
    assert "not valid TOML" in capsys.readouterr().err and config.read_text() == "[broken\n"
