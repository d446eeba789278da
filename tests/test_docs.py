"""The README is a short front door and every relative link in it and in docs/ leads
somewhere: to a file that exists and, for a `file.md#anchor` link, to a heading of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 200
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose(text: str) -> str:
    """The text without fenced code blocks (a link inside one is not a link)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return "".join(c for c in text if c.isalnum() or c in "_- ").replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in HEADING.findall(prose(page.read_text("utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link of ``page`` whose file is missing, or whose anchor is not a
    heading of the Markdown file it points at."""
    problems = []
    for target in LINK.findall(prose(page.read_text("utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"{page.name}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor.lower() not in anchors(dest):
            problems.append(f"{page.name}: {target} (no such heading)")
    return problems


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_readme_is_a_short_front_door() -> None:
    lines = (ROOT / "README.md").read_text("utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


def test_the_docs_the_readme_promises_exist_and_are_linked() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    for name in ("user-guide", "replay", "backends", "results", "architecture",
                 "replay-at-scale"):
        assert (ROOT / "docs" / f"{name}.md").exists()
        assert f"docs/{name}.md" in readme, f"README.md does not link docs/{name}.md"


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A title: with `code`\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-title-with-code) [ok](there.md#twice-1) "
        "[web](https://example.org/x) ![img](there.md)\n"
        "[gone](missing.md) [bad anchor](there.md#nowhere)\n"
        "```\n[in code](ignored.md)\n```\n"
    )
    assert broken_links(page) == [
        "page.md: missing.md (no such file)",
        "page.md: there.md#nowhere (no such heading)",
    ]
