"""The repository stands on its own: no file points at notes or documents outside it.

A reader of the code, tests or docs has only this repository (and the public web), so a comment
that says where a fact came from names the public source itself (server, version, URL), and a
comment that once credited a private source document states the fact instead. This test fails
on any tracked text file that still cites the private notes folder, a private source document
by number, or a section of one of the private stream notes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where to look without git (a copy of the tree): everything the project ships or documents.
FOLDERS = ("sandbox_app", "tests", "docs", "packaging", "resources")
TOP_FILES = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "SECURITY.md",
    "THIRD_PARTY_NOTICES.md",
    "pyproject.toml",
    "LICENSE",
)

# Written so that this file's own text does not match: "[/]" is a slash, "[ _-]?" the space.
OUTSIDE = re.compile(
    r"\.\.[/]shared"  # a relative path out of the repository into the shared folder
    r"|/work[/]shared"  # the same folder by its absolute path
    r"|shared[/](?:streams|seeds)"  # the notes folders by name
    r"|(?<![a-z])seed[ _-]?00[0-9]"  # a source document by number, in prose or in a test's name
    r"|\bthe (?:react )?seeds\b"  # the source documents as a group
    # a section of one of the stream notes: a note's name, then a section sign
    r"|\b(?:openai|vllm|ollama|llama\.cpp|lmstudio|openrouter|deepseek|tool-calls"
    r"|think-tags-and-harmony)(?:\.md)?\s*§",
    re.IGNORECASE,
)


def tracked_files() -> list[Path]:
    """Every file git tracks, or, outside a git checkout, every file in the shipped folders."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        found = [ROOT / name for name in TOP_FILES if (ROOT / name).is_file()]
        for folder in FOLDERS:
            found += [p for p in (ROOT / folder).rglob("*") if "__pycache__" not in p.parts]
        return sorted(found)
    return sorted(ROOT / name for name in listed.decode().split("\0") if name)


def outside_references(text: str) -> list[tuple[int, str]]:
    """(line number, matched text) for every reference out of the repository in ``text``."""
    return [
        (number, match.group(0))
        for number, line in enumerate(text.splitlines(), start=1)
        for match in OUTSIDE.finditer(line)
    ]


def test_the_pattern_catches_each_kind_of_outside_reference() -> None:
    # Joined at run time so this file does not cite them itself.
    slash = "/"
    cited = [
        "see .." + slash + "shared" + slash + "streams" + slash + "openai.md",
        "copied from /work" + slash + "shared" + slash + "streams" + slash,
        "(shared" + slash + "seeds" + slash + "002.txt)",
        "# Seed " + "002's wording",
        "def test_seed_" + "003_paren_chain() -> None:",
        "## Safety rules, from the ReAct " + "seeds",
        "# llama.cpp b9554 (llama.cpp.md " + "§3a)",
        "# a pre-opened block (think-tags-and-harmony " + "§1)",
    ]
    assert [bool(outside_references(line)) for line in cited] == [True] * len(cited)
    fine = [
        "# OpenAI o3-mini-2025-01-31, as recorded in https://github.com/discourse/discourse",
        "seed: int | None = None  # the model's sampling seed",
        'sampling: dict[str, float | None] = {"seed": params.seed}',
        "docs/ARCHITECTURE.md has the picture",
    ]
    assert [outside_references(line) for line in fine] == [[]] * len(fine)


def test_no_file_points_outside_the_repository() -> None:
    files = tracked_files()
    # The scan really covers the code, the tests and the docs (it cannot pass on an empty list).
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {
        "README.md",
        "docs/guide/README.md",
        "sandbox_app/core/running/engine.py",
        "tests/core/test_sse.py",
    } <= names
    found: list[str] = []
    for path in files:
        if not path.is_file():
            continue  # deleted in the work tree but not yet in the index
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary: images, icons
        text = data.decode("utf-8", errors="replace")
        found += [
            f"{path.relative_to(ROOT).as_posix()}:{number}: {match}"
            for number, match in outside_references(text)
        ]
    assert found == [], "references out of the repository:\n" + "\n".join(found)


# A Markdown link or image: ](target), the target up to a space or the closing parenthesis.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (code blocks' # lines are not ones)."""
    anchors: set[str] = set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (heading := re.match(r"#{1,6} (.*)", line)):
            words = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(words.replace(" ", "-"))
    return anchors


def test_every_relative_link_in_the_docs_reaches_its_file_and_heading() -> None:
    # The README is a front page that sends readers on into docs/guide/: a page moved or a
    # heading renamed must not leave a link that goes nowhere.
    pages = [ROOT / name for name in TOP_FILES if name.endswith(".md")]
    pages += sorted((ROOT / "docs" / "guide").glob("*.md"))
    assert ROOT / "docs" / "guide" / "README.md" in pages
    broken: list[str] = []
    for page in pages:
        for match in LINK.finditer(page.read_text(encoding="utf-8")):
            target = match.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT).as_posix()}: {target}"
            if not linked.exists():
                broken.append(where)
            elif (
                anchor
                and linked.suffix == ".md"
                and anchor not in heading_anchors(linked.read_text(encoding="utf-8"))
            ):
                broken.append(where + " (no such heading)")
    assert broken == [], "links that go nowhere:\n" + "\n".join(broken)
