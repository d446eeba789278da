"""The project-instructions loader: which files apply to which paths, nearest first; read
again when changed on disk; refused outside the repository; secrets redacted."""

from __future__ import annotations

import os
from pathlib import Path

from memory.turn.instructions import MAX_BYTES, Instructions, render


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_nearest_first_and_only_the_folders_concerned(tmp_path):
    root = _write(tmp_path, {
        "AGENTS.md": "Use tabs.", "CLAUDE.md": "Be brief.",
        "api/AGENTS.md": "Use spaces in api.", "api/v2/AGENTS.md": "v2 returns JSON.",
        "web/AGENTS.md": "web rule", "api/v2/handlers.py": "x = 1\n",
        ".engram/rules/b.md": "rule b", ".engram/rules/a.md": "rule a",
        ".engram/rules/notes.txt": "not a rule"})
    found = Instructions(root).applying(["api/v2/handlers.py::handle"])
    assert [i.file for i in found] == ["api/v2/AGENTS.md", "api/AGENTS.md", "AGENTS.md",
                                       "CLAUDE.md", ".engram/rules/a.md", ".engram/rules/b.md"]
    assert found[0].folder == "api/v2" and found[0].kind == "agents"
    assert found[0].source == "instructions:api/v2/AGENTS.md"
    root_only = Instructions(root).applying()
    assert [i.file for i in root_only] == ["AGENTS.md", "CLAUDE.md", ".engram/rules/a.md",
                                           ".engram/rules/b.md"]
    text = render(found)
    assert text.index("v2 returns JSON.") < text.index("Use spaces in api.") \
        < text.index("Use tabs.")
    assert "nearer one wins" in text


def test_a_change_on_disk_is_read_on_the_next_call(tmp_path):
    root = _write(tmp_path, {"AGENTS.md": "first rule"})
    loader = Instructions(root)
    assert loader.applying()[0].text == "first rule"
    path = root / "AGENTS.md"
    path.write_text("second, longer rule")
    assert loader.applying()[0].text == "second, longer rule"
    stat = path.stat()
    path.write_text("third rule!!!!!!!!!")  # same size: the modification time tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert loader.applying()[0].text == "third rule!!!!!!!!!"
    path.unlink()
    assert loader.applying() == []


def test_outside_large_binary_and_secrets(tmp_path, monkeypatch):
    outside = tmp_path / "outside.md"
    outside.write_text("from outside")
    root = _write(tmp_path / "repo", {"sub/x.py": "", "big/AGENTS.md": "x" * (MAX_BYTES + 1)})
    (root / "AGENTS.md").symlink_to(outside)
    (root / "sub" / "AGENTS.md").write_bytes(b"\xff\xfe bad")
    (root / "CLAUDE.md").write_text("deploy with sk-ant-abcdefghijklmnopqrstuvwx please")
    loader = Instructions(root)
    found = loader.applying(["sub/x.py", "big/", str(tmp_path / "elsewhere.py")])
    assert [i.file for i in found] == ["CLAUDE.md"]
    assert "sk-ant-" not in found[0].text and "[REDACTED]" in found[0].text
    assert loader.problems["AGENTS.md"].startswith("refused")
    assert "not UTF-8" in loader.problems["sub/AGENTS.md"]
    assert "over" in loader.problems["big/AGENTS.md"]
    assert loader.folder_of(tmp_path / "elsewhere.py") is None


def test_a_problem_is_said_only_while_its_file_applies(tmp_path):
    root = _write(tmp_path, {"AGENTS.md": "root rule"})
    (root / "a").mkdir()
    (root / "a" / "AGENTS.md").write_bytes(b"\xff\xfe not text")
    loader = Instructions(root)
    assert [i.file for i in loader.applying(["a/x.py"])] == ["AGENTS.md"]
    assert set(loader.problems) == {"a/AGENTS.md"}
    assert [i.file for i in loader.applying(["b/y.py"])] == ["AGENTS.md"]
    assert loader.problems == {}  # a/ is not concerned by this context
