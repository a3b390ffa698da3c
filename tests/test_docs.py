"""The README is the front page and docs/ the manual (issue #44): their shape, their links, and no commit hashes."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
BENCHMARKS = ("wvb", "cdeval", "normad", "llm_globe", "socialcc")


def test_readme_is_a_front_page_of_at_most_300_lines():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def test_the_manual_has_a_page_per_benchmark_and_per_topic():
    expected = [f"benchmarks/{name}.md" for name in BENCHMARKS] + [
        "README.md", "evaluating.md", "release-format.md", "performance.md"]
    assert [page for page in expected if not (REPO / "docs" / page).is_file()] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_commit_hashes(page):
    """A hash means nothing to a reader of the docs; a date and what changed does."""
    text = page.read_text(encoding="utf-8")
    hashes = [word for word in re.findall(r"\b[0-9a-f]{7,40}\b", text)
              if re.search(r"[a-f]", word) and re.search(r"[0-9]", word)]
    assert hashes == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_reach_a_file_and_heading(page):
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.is_file() and anchor not in headings(file):
            broken.append(target)
    assert broken == []


def headings(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    outside_code = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in outside_code.splitlines() if line.startswith("#")}


def test_quick_start_test_command_is_what_ci_runs():
    """The quick start's second command is the one .ci/run runs."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    test_command = block.strip().splitlines()[1].split("#", 1)[0].strip()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert test_command == ci[-1]
