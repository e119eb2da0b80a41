"""What the reflection model is shown, and how its reply is read.

Shown: the template being improved, what it must keep (keeping.py), the tools, and a few of
the cases it failed on the training split — each with its question, expected answer, the
answer given, the checks that failed (a judge's reason among them) and its trace, all
bounded (:data:`MAX_FAILURES` cases, :data:`MAX_TRACE` characters of each trace, its start
and its end), so that a long run never makes an unbounded request.

Read: the whole new template between ``<new_prompt>`` and ``</new_prompt>``, the last such
block of the reply once its leading thinking is set apart (``<think>…</think>`` or
``<thinking>…</thinking>`` blocks at its start; one never closed is the whole reply), the
template taken as written (a prompt may itself speak of ``<think>`` tags); what the reply
says before the block is its diagnosis, shown in the progress, from after a closing tag that
nothing opened (a template that pre-opens the thinking block leaves one). Tags rather than
a Markdown fence: a template may hold fences of its own, and a reasoning model writes fences
in its thinking. The reply is text from outside: read for that block, never executed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.optimizing.keeping import Kept
from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running.recording import event_from_dict
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.untrusted.file_reader import ReadError

MAX_FAILURES = 4  # failing cases shown in one reflection
MAX_TRACE = 3_000  # characters of one trace shown (its start and its end)
MAX_ANSWER = 500  # characters of one answer shown
MAX_DIAGNOSIS = 300  # characters of the reply's diagnosis kept for the progress line
OPEN, CLOSE = "<new_prompt>", "</new_prompt>"
_LEADING_THINK = re.compile(r"\s*<(think|thinking)>", re.I)
_LONE_CLOSER = re.compile(r"</think(?:ing)?>", re.I)

PROMPT = """You improve the system prompt of a ReAct agent. The agent runs with the template \
below; the app fills {{tools}} with the tools' descriptions and {{format}} with how to write \
an action{variables_note}. The agent failed the cases shown after it.

The template now:
<current_prompt>
{template}
</current_prompt>

Its tools: {tools}

The new template must keep {kept} exactly as written.

The failed cases ({shown} of {failed} that failed):
{cases}

Say in a few sentences what the failures have in common and what the prompt should say \
differently; then write the whole new template between {open} and {close}, and nothing \
after it. Change the wording only where the failures call for it."""


@dataclass(frozen=True)
class Failure:
    """One failed case as the reflection model is shown it."""

    case: int  # its number in the test set (0-based)
    question: str
    expected: str
    answer: str  # the answer given, else how the run ended
    failed_checks: tuple[str, ...]  # "✗ tool used: search — never called", a judge's reason
    trace: str  # the trace as text, bounded (:func:`trace_of`)
    passes: int = 0  # of ``runs`` repeats
    runs: int = 1


def trace_of(events: Iterable[dict[str, Any]]) -> str:
    """A stored trace as the text the CLI prints, its thinking left out (it is long, and the
    prompt is what is being improved, not the model's reasoning), cut to :data:`MAX_TRACE`."""
    shown: list[str] = []
    readable: list[Any] = []
    for item in events:
        try:
            readable.append(event_from_dict(item))
        except ReadError:
            break
    for text, role in lines(readable, marks=False):
        if role not in (Role.THINKING, Role.THINKING_HEADER):
            shown.append(text)
    return _bounded("\n".join(shown), MAX_TRACE)


def reflection_prompt(
    version: PromptVersion, kept: Kept, failures: Sequence[Failure], failed: int
) -> str:
    """The one user message a reflection asks with (``failed``: how many cases failed, of
    which ``failures`` are shown)."""
    tools = "; ".join(f"{t.name}: {t.description}" for t in version.tools) or "none"
    written = kept.written()
    return PROMPT.format(
        variables_note=" (a {{name}} is a value the app fills in)" if kept.variables else "",
        template=version.template,
        tools=tools,
        kept=", ".join(written) if written else "nothing in particular",
        shown=len(failures),
        failed=failed,
        cases="\n".join(_case(i, f) for i, f in enumerate(failures, start=1)),
        open=OPEN,
        close=CLOSE,
    )


def _case(index: int, f: Failure) -> str:
    checks = "\n".join(f"  {line}" for line in f.failed_checks) or "  (the answer alone)"
    return (
        f'<case number="{index}" passed="{f.passes}/{f.runs}">\n'
        f"Question: {f.question}\n"
        f"Expected answer: {f.expected}\n"
        f"Answer given: {_bounded(f.answer, MAX_ANSWER)}\n"
        f"Failed checks:\n{checks}\n"
        f"Trace:\n{f.trace}\n"
        "</case>"
    )


@dataclass(frozen=True)
class Proposal:
    """What a reply proposes: a template, or None with the reason (one line)."""

    template: str | None
    diagnosis: str = ""
    problem: str = ""


def after_thinking(reply: str) -> str:
    """``reply`` without its leading thinking: each leading block set apart (one never
    closed is all of it). Generated cases are read after it too (generated_cases.py)."""
    text = reply
    while (opened := _LEADING_THINK.match(text)) is not None:
        closer = re.compile(f"</{opened.group(1)}>", re.I).search(text, opened.end())
        text = "" if closer is None else text[closer.end() :]
    return text


def read_reply(reply: str) -> Proposal:
    text = after_thinking(reply)
    # The last block: it ends at the last closing tag and starts at the first opening tag
    # after the closing tag before (so a template may hold an opening tag of its own).
    end = text.rfind(CLOSE)
    if text.find(OPEN, end + 1 if end != -1 else 0) != -1:
        return Proposal(None, problem=f"the reply's {OPEN} block is not closed (cut short?)")
    previous = text.rfind(CLOSE, 0, end) if end != -1 else -1
    start = text.find(OPEN, previous + len(CLOSE) if previous != -1 else 0, max(end, 0))
    if end == -1 or start == -1:
        return Proposal(None, problem=f"the reply has no {OPEN}…{CLOSE} block")
    before = text[:start]
    closers = list(_LONE_CLOSER.finditer(before))
    if closers:  # "…</think>" with nothing opened (a pre-opened block): all before it thinking
        before = before[closers[-1].end() :]
    diagnosis = " ".join(before.split())
    # The template as written, tags inside it and all (a prompt may speak of <think>).
    template = text[start + len(OPEN) : end].strip()
    return Proposal(template, _bounded(diagnosis, MAX_DIAGNOSIS))


def _bounded(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its start and its end, the middle said cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters cut] …\n{text[-half:]}"
