"""Every relative link in README.md and docs/*.md points at a file that exists, and a ``#anchor``
at a heading of the page it names, so that renaming a page or a heading cannot leave a dead
link behind (issue 24: one name per family)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
EXTERNAL = ("http://", "https://", "mailto:")


def prose(text: str) -> str:
    """The page without fenced blocks (examples may hold brackets that are no links)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: links reduced to their text, lower case, punctuation
    dropped (``-`` and ``_`` kept), spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors a page's headings give, with GitHub's ``-1``, ``-2`` suffixes for repeats."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in HEADING.findall(prose(page.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(page: Path) -> list[str]:
    """The page's link targets that point into the repository (code spans and fences left out)."""
    text = CODE_SPAN.sub("", prose(page.read_text()))
    return [t for t in LINK.findall(text) if not t.startswith(EXTERNAL)]


def dead_links(page: Path) -> list[str]:
    """Each link of ``page`` whose file, or whose anchor in a markdown file, is missing."""
    dead = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            dead.append(f"{target}: no file {goal.relative_to(ROOT) if goal.is_relative_to(ROOT) else goal}")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            dead.append(f"{target}: no heading gives #{anchor}")
    return dead


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_points_at_an_existing_file_and_heading(page):
    assert dead_links(ROOT / page) == []


def test_the_checker_finds_a_dead_file_and_a_dead_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# Vector env: figures\n\n## Vector env: figures\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#vector-env-figures) [b](other.md#vector-env-figures-1) [c](#top)\n"
                    "[d](gone.md) [e](other.md#nope) `[f](gone.md)` [g](https://example.org/x)\n\n# Top\n\n"
                    "```\n[h](gone.md)\n```\n")
    assert [d.split(":")[0] for d in dead_links(page)] == ["gone.md", "other.md#nope"]
