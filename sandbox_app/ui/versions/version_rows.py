"""The Versions tab's rows: a version's name first (then its short id), a row for each model
it ran on with its runs and pass rate, never one rate pooled over models; with no history
database, one row of the scenario file's pooled counts, said to be over all models."""

from __future__ import annotations

from sandbox_app.core.comparing.version_runs import VersionRuns
from sandbox_app.core.scenarios.prompt_versions import PromptEntry
from sandbox_app.core.tools.outside import clean_description

# The figures before the date: in a narrow panel they are what shows without scrolling.
COLUMNS = ("★", "Version", "Id", "Model", "Runs", "Pass", "First run")
ALL_MODELS = "all models"  # the scenario file's pooled counts: no history database
MAX_NAME = 60  # characters: a name is a label in a list, not a note


def shown(text: str, limit: int = MAX_NAME) -> str:
    """A name from a file as one line of printable text (control and bidi characters out)."""
    return clean_description(text, limit)


def rows_of(entry: PromptEntry, counts: dict[str, list[VersionRuns]] | None) -> list[list[str]]:
    """A version's rows: one per model it ran on (``counts``, the history database's), else
    one with no runs; with no database, one with the scenario file's counts over all models."""
    when = entry.time.astimezone().strftime("%Y-%m-%d %H:%M")
    first = ["★" if entry.starred else "", shown(entry.name) if entry.name else "—", entry.short]
    if counts is None:
        pooled = pass_text(entry.passed, entry.checked)
        return [[*first, ALL_MODELS, str(entry.runs), pooled, when]]
    found = counts.get(entry.id) or [VersionRuns(entry.id, "—", 0, 0, 0)]
    return [
        [*first, shown(c.model) or "—", str(c.runs), pass_text(c.passed, c.checked), when]
        for c in found
    ]


def pass_text(passed: int, checked: int) -> str:
    return f"{passed}/{checked} ({passed / checked:.0%})" if checked else "—"
