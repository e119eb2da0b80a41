"""The one rule for putting text the app did not write (a model's reply, a question from a
file, a server's model name) into Markdown: it stays text, whatever it holds.

- A block of it goes in a fence of more backticks than any run in the text (CommonMark closes
  a fence only with at least as many), so a reply holding ```` ``` ```` cannot close the block
  and make what follows live Markdown: remote images, raw HTML, links.
- A name (a model's) may go in a code span of more backticks than any run in it.
- A piece of it in a heading, a list item or a table cell is one line (never at a line's
  start) with every character Markdown reads mid-line backslash-escaped (CommonMark lets any
  ASCII punctuation be), so ``<img …>``, ``![…](…)``, ``&lt;``, ``|``, ``#``, ``$…$`` are
  shown, never read.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
# Emphasis, code, links and images, raw HTML and entities, a table's cells, a heading's
# closing #s, strikethrough, math: what means something in the middle of a line.
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#!|~&$])")
_BREAKS = re.compile(r"[\s\x00-\x1f\x7f]+")


def fence(text: str, info: str = "text") -> str:
    """``text`` as a fenced code block, however many backticks it holds."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{marks}{info}\n{body}{marks}"


def code(text: str) -> str:
    """``text`` as an inline code span (one line), however many backticks it holds."""
    line = _BREAKS.sub(" ", text).strip()
    longest = max((len(run) for run in _BACKTICKS.findall(line)), default=0)
    marks = "`" * (longest + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{marks}{pad}{line}{pad}{marks}"


def inline(text: str) -> str:
    """``text`` as one line of literal Markdown text (a heading, list item or table cell)."""
    line = _BREAKS.sub(" ", text).strip()
    return _SPECIAL.sub(r"\\\1", line)


__all__ = ["code", "fence", "inline"]
