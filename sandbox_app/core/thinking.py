"""Separating a model's inline thinking from its reply while the reply streams.

Servers that parse thinking send it in a field of its own (``reasoning_content`` or
``reasoning``; backends read those). Servers that don't leave it in the content:
``<think>…</think>`` or ``<thinking>…</thinking>``, or only ``…</think>`` when the model's chat
template opened the block itself (Qwen3, QwQ, DeepSeek-R1 templates: see
``shared/streams/think-tags-and-harmony.md``). The engine runs every backend's content through
one :class:`ThinkSplitter`, so the parser, the observation cut and the answer check only ever
see content.

A tag may arrive cut across chunks (``<thi`` + ``nk>``): text that may still turn out to be a
tag is held back, never released as content. A ``</think>`` with no opening tag means
everything the reply wrote so far was thinking: :data:`RECLASSIFY` says so, and the engine
moves that text over. Each chunk is scanned once, from ``<`` to ``<``: linear in the reply.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["content", "reasoning", "reclassify"]
Piece = tuple[Kind, str]
# "Everything this reply released as content so far was thinking" (a pre-opened block closed).
RECLASSIFY: Piece = ("reclassify", "")

OPENERS = ("<think>", "<thinking>")
CLOSERS = ("</think>", "</thinking>")
_TAGS = OPENERS + CLOSERS
_LONGEST = max(len(t) for t in _TAGS)


def _tag_at(text: str, pos: int) -> str | None:
    """The tag starting at ``text[pos]`` ("<" there), "" if the text ends inside a possible
    tag, None if no tag starts there. Case-insensitive: ``<THINK>`` is a tag too."""
    window = text[pos : pos + _LONGEST].lower()
    for tag in _TAGS:
        if window.startswith(tag):
            return tag
    if any(tag.startswith(window) for tag in _TAGS):
        return ""  # "<thi": wait for the rest
    return None


class ThinkSplitter:
    """Feeds a streamed reply's content; returns ``(kind, text)`` pieces in order.

    ``starts_inside``: the reply begins inside a thinking block (the model's template opens
    it), as learnt from an earlier reply of the same model.
    """

    def __init__(self, *, starts_inside: bool = False) -> None:
        self.inside = starts_inside  # currently in a thinking block
        self.saw_thinking = starts_inside  # a block was opened (or pre-opened) in this reply
        self._held = ""  # a possible tag cut across chunks
        self._trim_leading = starts_inside  # drop the blank lines right after a tag
        self.released_content = False

    def feed(self, text: str) -> list[Piece]:
        text = self._held + text
        self._held = ""
        pieces: list[Piece] = []
        start = 0  # text[start:] is not yet emitted
        pos = text.find("<")
        while pos != -1:
            tag = _tag_at(text, pos)
            if tag == "":
                self._emit(pieces, text[start:pos])
                self._held = text[pos:]
                return pieces
            if tag is None:
                pos = text.find("<", pos + 1)
                continue
            if tag in CLOSERS and not self.inside and not self.saw_thinking:
                # "…</think>" with no opening tag: all of the reply so far was thinking.
                pieces[:] = [RECLASSIFY, *(("reasoning", t) for _, t in pieces)]
                self.inside = self.saw_thinking = True
                self.released_content = False
            self._emit(pieces, text[start:pos])
            # A second opener, or a stray closer after a closed block, carries nothing.
            if tag in OPENERS:
                self.inside = self.saw_thinking = True
            else:
                self.inside = False
            self._trim_leading = True
            start = pos + len(tag)
            pos = text.find("<", start)
        self._emit(pieces, text[start:])
        return pieces

    def finish(self) -> list[Piece]:
        """The end of the reply: a held fragment (``<thi``) was text after all."""
        held, self._held = self._held, ""
        pieces: list[Piece] = []
        self._emit(pieces, held)
        return pieces

    def _emit(self, pieces: list[Piece], text: str) -> None:
        if self._trim_leading:
            text = text.lstrip()
            if not text:
                return
            self._trim_leading = False
        if not text:
            return
        kind: Kind = "reasoning" if self.inside else "content"
        if kind == "content":
            self.released_content = True
        if pieces and pieces[-1][0] == kind:
            pieces[-1] = (kind, pieces[-1][1] + text)
        else:
            pieces.append((kind, text))
