"""Loop detection: a model calling the same tool with the same input again and again, or two
calls in turn (A, B, A, B), or giving the same reply with no action in it again and again
(a small model stuck on "I'm sorry for the confusion."), until Max steps.

The engine feeds every action it is about to run to a :class:`LoopWatch`; the watch says
when one repeats. Two inputs are the same action when they differ only in case, surrounding
space or runs of inner whitespace (``search[ Paris  weather]`` is ``search[paris weather]``):
a model that loops rarely writes its input byte for byte alike. Each action is named at most
once, so a long loop adds one line a repeated call, not several. Whether a loop also ends the
run is the lane's **Stop on loops** setting; noticing never changes the run. A stuck reply
is also named in the end line of a run that used up its steps (:meth:`LoopWatch.stuck_note`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sandbox_app.core.running.events import ActionParsed, LoopNoticed

LOOP_REPEATS = 3  # the same action this many times is a loop (the 3rd call is named)
# The same reply with no action in it this many times in a row (alike as inputs are: case and
# spacing aside) is the model stuck: the 3rd is named, as a repeated action's is.
REPLY_REPEATS = 3
_SHOWN_INPUT = 60  # characters of a long input shown in the notice


def _key(action: ActionParsed) -> tuple[str, str]:
    return action.tool.casefold(), " ".join(action.input.split()).casefold()


def shown(action: ActionParsed) -> str:
    """``search[Paris weather]``, a long input shortened."""
    text = " ".join(action.input.split())
    if len(text) > _SHOWN_INPUT:
        text = text[: _SHOWN_INPUT - 1] + "…"
    return f"{action.tool}[{text}]"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``22nd``."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


@dataclass
class LoopWatch:
    """The actions of one run so far; :meth:`see` each before it runs."""

    stop: bool = False  # Stop on loops: the first loop ends the run
    repeats: int = LOOP_REPEATS
    stopped_on: LoopNoticed | None = None  # with ``stop``: the loop that ends the run
    _counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    _last: list[tuple[str, str]] = field(default_factory=list)  # the last four actions
    _previous: ActionParsed | None = None
    _reply: tuple[str, int] = ("", 0)  # the last reply with no action, alike, and in a row
    stuck: tuple[str, int] | None = None  # the reply stuck on longest, shown, and its count

    def ended(self) -> bool:
        """Stop on loops and a loop seen: the run ends, no further action runs."""
        return self.stopped_on is not None

    def see(self, action: ActionParsed) -> LoopNoticed | None:
        """A notice when ``action`` makes a loop: its ``repeats``-th time or more, or the
        fourth of an A, B, A, B."""
        notice = self._notice(action)
        if notice is not None and self.stop:
            self.stopped_on = notice
        return notice

    def see_reply(self, step: int, reply: str) -> LoopNoticed | None:
        """A notice when ``reply`` (no action in it) is the same as the ones before it for
        the REPLY_REPEATS-th time in a row or more."""
        key = " ".join(reply.split()).casefold()
        times = self._reply[1] + 1 if key and key == self._reply[0] else 1
        self._reply = (key, times)
        if not key or times < REPLY_REPEATS:
            return None
        said = " ".join(reply.split())
        said = said if len(said) <= _SHOWN_INPUT else said[: _SHOWN_INPUT - 1] + "…"
        self.stuck = (f"“{said}”", times)
        notice = LoopNoticed(step, f"loop: the same reply for the {ordinal(times)} time in a "
                             f"row: “{said}”", f"“{said}”", times)  # fmt: skip
        if self.stop:
            self.stopped_on = notice
        return notice

    def stuck_note(self) -> str:
        """"; stuck: the same reply 5 times in a row (“…”)" for a run's end line, else ""."""
        if self.stuck is None:
            return ""
        said, times = self.stuck
        return f"; stuck: the same reply {times} times in a row ({said})"

    def _notice(self, action: ActionParsed) -> LoopNoticed | None:
        self._reply = ("", 0)  # an action between two replies: not in a row
        key = _key(action)
        self._counts[key] += 1
        self._last = [*self._last[-3:], key]
        previous, self._previous = self._previous, action
        times = self._counts[key]
        if times >= self.repeats:
            name = shown(action)
            text = f"loop: {name} for the {ordinal(times)} time"
            return LoopNoticed(action.step, text, name, times)
        a, b, a2, b2 = ([None] * 4 + self._last)[-4:]
        if a is not None and a != b and (a, b) == (a2, b2) and previous is not None:
            name, other = shown(action), shown(previous)
            text = f"loop: {other} and {name} in turn, twice (A, B, A, B)"
            return LoopNoticed(action.step, text, name, times, other=other)
        return None
