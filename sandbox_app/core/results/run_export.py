"""One run as a document for people: Markdown, and a self-contained HTML page.

Both read the run's record through core/results/presentation.py, as the window, the CLI and Copy
trace do, so every export says the same. The Markdown fences the text as Copy trace gives it
(core/results/trace_text.py: roles marked where there is no colour). The HTML page draws each line
as the window does: its role is its CSS class, coloured from the caller's table (the
window's colours: this layer knows no Qt), the model's thinking folded in ``<details>``; it
fetches nothing: no external style sheet, font, image or script.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_text import THINKING_PREFIX, lines
from sandbox_app.core.running.events import Event, RunFinished
from sandbox_app.core.running.records import RunRecord, RunSettings
from sandbox_app.core.untrusted.markdown import code, fence, inline

# Roles the page draws in its own text colour: the rest take the caller's styles.
PLAIN_ROLES = (Role.MODEL, Role.SUMMARY)


def step_text(record: RunRecord, step: int) -> str:
    """One step as text (a trace's context menu: Copy step k)."""
    events = [e for e in record.events if getattr(e, "step", None) == step]
    return "\n".join(line for line, _ in lines(events)).strip() + "\n"


def run_markdown(record: RunRecord) -> str:
    """The run for people: text from the model, the file or the server goes through
    core/untrusted/markdown.py's rule (escaped in the header, the trace fenced), so it stays
    text."""
    s = record.settings
    done = record.finished
    head = [
        f"# {inline(s.question or 'A ReAct run')}",
        "",
        f"- Model: {code(s.model or s.backend)} ({inline(s.backend or 'unknown backend')})",
        f"- Settings: dialect {inline(s.dialect or '—')}, max steps {s.max_steps}, "
        f"tool calls {inline(s.settings.tool_calling)}",
    ]
    if done is not None:
        reason = f" — {inline(done.reason)}" if done.reason else ""
        head.append(f"- Outcome: {inline(done.status)}{reason}")
        head.append(f"- Answer: {inline(done.answer) if done.answer is not None else '—'}")
        head.append(f"- Metrics: {inline(done.metrics.summary())}")
    trace = "\n".join(line for line, role in lines(_trace_events(record.events)))
    return "\n".join([*head, "", fence(trace), ""])


def run_html(record: RunRecord, styles: Mapping[str, Any]) -> str:
    """A page that shows the run as the window does; ``styles``: role → an object with
    ``color``, ``background``, ``bold``, ``italic`` (ui/common/theme.py's ``Style``), for every
    role but :data:`PLAIN_ROLES`."""
    body: list[str] = []
    folded = False
    for line, role in lines(_trace_events(record.events), marks=False):
        if folded and role is not Role.THINKING:
            body.append("</details>")
            folded = False
        if role is Role.THINKING_HEADER:
            body.append(f'<details><summary class="{role}">{html.escape(line)}</summary>')
            folded = True
            continue
        body.append(f'<div class="{role}">{html.escape(line) or "&nbsp;"}</div>')
    if folded:
        body.append("</details>")
    title = html.escape(record.settings.question or "A ReAct run")
    outcome = html.escape(_outcome(record.finished))
    about = "".join(f"<li>{html.escape(line)}</li>" for line in settings_lines(record.settings))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
        ".trace{font-family:ui-monospace,monospace;white-space:pre-wrap;border:1px solid #ccc;"
        "padding:1em}details{margin:0}summary{cursor:pointer}"
        f"{css(styles)}</style></head><body><h1>{title}</h1><ul>{about}</ul><p>{outcome}</p>"
        f'<div class="trace">{"".join(body)}</div></body></html>\n'
    )


def css(styles: Mapping[str, Any]) -> str:
    """The page's role → CSS class table: one rule per role, named by the role (a role the
    caller gives no style, like :data:`PLAIN_ROLES`, in the page's own colour)."""
    rules = []
    for role in Role:
        st = styles.get(role)
        if st is None or role in PLAIN_ROLES:
            rules.append(f".{role}{{color:inherit}}")
            continue
        rules.append(
            f".{role}{{color:{st.color};"
            + (f"background:{st.background};" if st.background else "")
            + ("font-weight:bold;" if st.bold else "")
            + ("font-style:italic;" if st.italic else "")
            + ("text-decoration:line-through;" if getattr(st, "strike", False) else "")
            + "}"
        )
    return "".join(rules)


def settings_lines(s: RunSettings) -> list[str]:
    """What produced the run, in words: the model and where it ran, then its settings."""
    where = s.backend or "unknown backend"
    if s.base_url:
        where += f" at {s.base_url}"
    lane = s.settings
    settings = [
        f"dialect {s.dialect or '—'}",
        f"max steps {s.max_steps}",
        f"tool calls {lane.tool_calling}",
        f"temperature {lane.temperature if lane.temperature is not None else 'the server’s'}",
        f"max tokens {lane.max_tokens if lane.max_tokens is not None else 'Auto'}",
    ]
    if lane.reasoning_effort:
        settings.append(f"reasoning effort {lane.reasoning_effort}")
    return [f"Model: {s.model or s.backend or '—'} ({where})", "Settings: " + ", ".join(settings)]


def slide_lines(record: RunRecord) -> tuple[str, str, list[tuple[str, str]]]:
    """The run for a slide: a title (the question), a subtitle (the model and the answer, or
    how it ended) and the trace's lines, each thinking block folded to one line saying so."""
    s, done = record.settings, record.finished
    if done is None:
        outcome = "not finished"
    elif done.answer is not None:
        outcome = f"Answer: {done.answer}"
    else:
        outcome = done.status.replace("_", " ").capitalize()
    subtitle = f"{s.model or s.backend or 'unknown model'} · {outcome}"
    out: list[tuple[str, str]] = []
    thought = 0  # lines of the thinking block being folded
    for line, role in lines(_trace_events(record.events)):
        if role in (Role.THINKING, Role.THINKING_HEADER):
            thought += role is Role.THINKING
            continue
        if thought:
            out.append(_folded(thought))
            thought = 0
        out.append((line, role))
    if thought:
        out.append(_folded(thought))
    return s.question or "A ReAct run", subtitle, out


def _folded(n: int) -> tuple[str, str]:
    """A thinking block of ``n`` lines as the one line a slide shows of it."""
    count = "1 line" if n == 1 else f"{n:,} lines"
    return f"{THINKING_PREFIX}thinking: {count}, never acted on", Role.THINKING


def _trace_events(events: Iterable[Event]) -> list[Event]:
    """The trace without the closing summary (the header says how the run ended)."""
    return [e for e in events if not isinstance(e, RunFinished)]


def _outcome(done: RunFinished | None) -> str:
    if done is None:
        return "Not finished."
    answer = f" Answer: {done.answer}." if done.answer is not None else ""
    return f"{done.status.replace('_', ' ').capitalize()}.{answer} {done.metrics.summary()}"


__all__ = ["css", "lines", "run_html", "run_markdown", "settings_lines", "slide_lines", "step_text"]
