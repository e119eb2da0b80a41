"""What changed between two prompt versions: a word-level diff of each text (the template and
every tool's description and input hint alike) and the changes that are not words, named
(the dialect, tools added or removed or reordered, the tool-calling mode).

Words are diffed with the whitespace between them as tokens of their own, so joining a part's
pieces gives back each side's text exactly; the window's Versions panel and
``react-sandbox prompts diff`` both read these pieces.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sandbox_app.core.scenarios.prompt_versions import PromptVersion

Op = Literal["same", "removed", "added"]
_TOKENS = re.compile(r"\s+|\S+")  # words and the whitespace between, each a token


@dataclass(frozen=True)
class Piece:
    op: Op
    text: str


@dataclass(frozen=True)
class PartDiff:
    """One text of the version ("template", "search: description"), as pieces."""

    label: str
    pieces: tuple[Piece, ...]

    @property
    def changed(self) -> bool:
        return any(p.op != "same" for p in self.pieces)

    def side(self, which: Literal["old", "new"]) -> str:
        """The text as it was (``old``) or is (``new``)."""
        skip = "added" if which == "old" else "removed"
        return "".join(p.text for p in self.pieces if p.op != skip)


@dataclass(frozen=True)
class VersionDiff:
    named: tuple[str, ...]  # "dialect: bracket → paren", "tool added: weather", …
    parts: tuple[PartDiff, ...]  # every text both versions have, changed or not

    @property
    def changed_parts(self) -> tuple[PartDiff, ...]:
        return tuple(p for p in self.parts if p.changed)

    @property
    def same(self) -> bool:
        return not self.named and not self.changed_parts


def word_diff(old: str, new: str) -> tuple[Piece, ...]:
    """``old`` → ``new`` word by word; neighbouring pieces of one kind are joined."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    runs: list[tuple[Op, list[str]]] = []
    # autojunk off: a long template's common words ("the") must not be thrown away.
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            runs.append(("same", a[i1:i2]))
        else:  # "replace" says the removed words first, as diffs are read
            changed: list[tuple[Op, list[str]]] = [("removed", a[i1:i2]), ("added", b[j1:j2])]
            runs += [(op, tokens) for op, tokens in changed if tokens]
    _slide(runs)
    pieces: list[Piece] = []
    for op, tokens in runs:
        text = "".join(tokens)
        if text and pieces and pieces[-1].op == op:
            pieces[-1] = Piece(op, pieces[-1].text + text)
        elif text:
            pieces.append(Piece(op, text))
    return tuple(pieces)


def _slide(runs: list[tuple[Op, list[str]]]) -> None:
    """An inserted or removed run that starts with the whitespace the text after it starts
    with is moved one token on, so it reads "Answer {+carefully and +}briefly" rather than
    "Answer{+ carefully and+} briefly" (the same change either way)."""
    for i in range(1, len(runs) - 1):
        (before, kept), (op, moved), (after, rest) = runs[i - 1], runs[i], runs[i + 1]
        if before != "same" or after != "same" or op == "same":
            continue
        while moved and rest and moved[0] == rest[0] and moved[0].isspace():
            kept.append(moved.pop(0))
            moved.append(rest.pop(0))


def diff_versions(old: PromptVersion, new: PromptVersion) -> VersionDiff:
    named: list[str] = []
    if old.dialect != new.dialect:
        named.append(f"dialect: {old.dialect} → {new.dialect}")
    if old.tool_calling != new.tool_calling:
        named.append(f"tool calling: {old.tool_calling} → {new.tool_calling}")
    old_tools = {t.name: t for t in old.tools}
    new_tools = {t.name: t for t in new.tools}
    named += [f"tool removed: {name}" for name in old_tools if name not in new_tools]
    named += [f"tool added: {name}" for name in new_tools if name not in old_tools]
    both = [name for name in new_tools if name in old_tools]
    if [n for n in old_tools if n in new_tools] != both:
        named.append("tools reordered: " + ", ".join(both))
    parts = [PartDiff("template", word_diff(old.template, new.template))]
    for name in both:
        was, now = old_tools[name], new_tools[name]
        parts.append(PartDiff(f"{name}: description", word_diff(was.description, now.description)))
        parts.append(PartDiff(f"{name}: input hint", word_diff(was.input_hint, now.input_hint)))
    return VersionDiff(tuple(named), tuple(parts))


def inline(pieces: tuple[Piece, ...], shown: Callable[[str], str] = str) -> str:
    """One text with the changes marked as ``git diff --word-diff`` does:
    ``[-removed-]{+added+}``; ``shown`` makes each piece's text safe where it goes (the
    terminal's ``visible``) before the marks, which are the app's own, are added."""
    marks = {"same": ("", ""), "removed": ("[-", "-]"), "added": ("{+", "+}")}
    return "".join(marks[p.op][0] + shown(p.text) + marks[p.op][1] for p in pieces)
