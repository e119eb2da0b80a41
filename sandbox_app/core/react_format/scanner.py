"""Incremental guard that cuts a streamed model turn where it starts inventing an Observation.

The model must never write its own observation: the "result" would then just be a guess. The
scanner sees the reply as it streams, releases text that is certainly the model's own, holds
back at most the start of one line while it could still become an ``Observation:`` label, and
reports the cut as soon as the label is certain, so the engine can close the stream instead of
paying for tokens it will throw away.

Every line is judged once, with bounded work, so feeding is linear in the reply's length
whatever the chunk sizes; ``parse_turn`` uses the same scanner on the whole text, which is why
streamed and whole parsing agree. What counts as an Observation label is decided by the
shared label grammar in :mod:`sandbox_app.core.react_format.dialects`.

The same guard cuts a degenerate reply: one that says the same line over and over (a small
model stuck in a repetition loop) is cut once the line has come :data:`REPEATED_LINES` times in
a row (blank lines between them do not break the run), and the stream closes as it does for an
invented observation.
"""

from __future__ import annotations

from enum import Enum

from sandbox_app.core.react_format.dialects import LABEL_LINE, label_of, observation_prefix

# The same non-empty line this many times in a row is degenerate generation, not a list: a
# reply rarely repeats a line word for word even twice.
REPEATED_LINES = 8


class _Verdict(Enum):
    TEXT = "text"
    HOLD = "hold"
    CUT = "cut"


def _judge(line: str, complete: bool) -> _Verdict:
    label = LABEL_LINE.match(line)
    if label is not None and label_of(label) == "observation":
        return _Verdict.CUT
    if not complete and observation_prefix(line) is not None:
        return _Verdict.HOLD
    return _Verdict.TEXT


class TurnScanner:
    """Feeds a streamed reply, separating the model's own text from a fabricated observation.

    ``feed`` returns the newly released text that is certainly the model's own; once
    ``observation_started`` is True everything else goes to ``dropped``. Call ``finish`` when
    the stream ends: it releases the held line, or drops it when it is a dangling fragment of
    the stop word (``Observ``).
    """

    def __init__(self) -> None:
        self._kept: list[str] = []
        self._dropped: list[str] = []
        self._held = ""  # the start of the current line while it may still be an Observation label
        self._line_is_text = False  # the current line was already judged to be model text
        self._cut = False
        self._line: list[str] = []  # the current line, for the repetition count
        self._last_line = ""  # the last non-empty line (stripped)
        self._repeats = 0  # how many times in a row it came
        self.repeated: str | None = None  # the line a degenerate reply repeated (then cut)

    @property
    def observation_started(self) -> bool:
        """The reply was cut: at an invented observation, or (``repeated``) at a line said
        :data:`REPEATED_LINES` times."""
        return self._cut

    @property
    def held(self) -> str:
        """The start of a line held back while it may become an Observation label."""
        return self._held

    @property
    def kept(self) -> str:
        return "".join(self._kept)

    @property
    def dropped(self) -> str:
        return "".join(self._dropped)

    def feed(self, delta: str) -> str:
        if self._cut:
            self._dropped.append(delta)
            return ""
        released: list[str] = []
        pos, size = 0, len(delta)
        while pos < size:
            newline = delta.find("\n", pos)
            end = size if newline == -1 else newline + 1
            piece = delta[pos:end]
            if self._line_is_text:
                released.append(piece)
                self._line.append(piece)
            else:
                line = self._held + piece
                verdict = _judge(line, complete=newline != -1)
                if verdict is _Verdict.CUT:
                    self._cut = True
                    self._held = ""
                    self._dropped.append(line + delta[end:])
                    break
                if verdict is _Verdict.HOLD:
                    self._held = line
                else:
                    self._held = ""
                    released.append(line)
                    self._line.append(line)
                    self._line_is_text = True
            if newline != -1:
                self._line_is_text = False
                if self._repeating("".join(self._line)):
                    self._dropped.append(delta[end:])
                    break
            pos = end
        text = "".join(released)
        self._kept.append(text)
        return text

    def _repeating(self, line: str) -> bool:
        """Count a whole line; True (and cut) when it makes a degenerate run."""
        self._line.clear()
        line = line.strip()
        if not line:
            return False
        self._repeats = self._repeats + 1 if line == self._last_line else 1
        self._last_line = line
        if self._repeats < REPEATED_LINES:
            return False
        self._cut, self.repeated = True, line
        return True

    def finish(self) -> str:
        """End of stream: release the held line, unless it is a fragment like ``Observ``."""
        held, self._held = self._held, ""
        if not held or self._cut:
            return ""
        if observation_prefix(held):
            self._dropped.append(held)
            return ""
        self._kept.append(held)
        return held
