"""How each prompt version did on each model: the Versions panel's rows, from the history
database (core/history/history_db.py), counting every run that was told the version — the
window's Run tab and lanes and ``react-sandbox run`` (table ``runs``), test sets in the window
and ``react-sandbox eval`` (table ``results``).

One read of each table per refresh, counted in SQL along the two covering indexes schema
step 5 made (``results_versions``, ``runs_versions``): its cost grows with the runs of the
versions asked for, never with the rest of the history, and never reads a run's row
(100,000 runs, all of the versions asked for: ~30 ms; 10,000 of 100,000: ~2 ms). A
version's figures are never pooled across models (grounded 10/12 overall is 2/2 offline,
4/5 on one model, 4/5 on another: three rows).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sandbox_app.core.history.history_db import HistoryStore

# Grouped in each covering index's own order (its columns, passed last), so SQLite counts
# along the index with no sort; the few groups are added up here. (Grouping by the model
# "or else the backend" in SQL sorted every run again: 2.5 times slower on 100,000 runs.)
_RESULTS = (
    "SELECT prompt_version, model, '', passed, COUNT(*) FROM results "
    "WHERE prompt_version IN ({marks}) GROUP BY prompt_version, model, passed"
)
_RUNS = (
    "SELECT prompt_version, model, backend, passed, COUNT(*) FROM runs "
    "WHERE prompt_version IN ({marks}) GROUP BY prompt_version, model, backend, passed"
)
_CHUNK = 400  # versions a query (SQLite allows 32,766 parameters; a history keeps 200 and stars)


@dataclass(frozen=True)
class VersionRuns:
    """One prompt version's runs on one model. ``checked``: the runs with an answer checked
    against an expected one (a run without one counts in ``runs`` only)."""

    version: str
    model: str
    runs: int
    checked: int
    passed: int

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.checked if self.checked else None


def version_runs(store: HistoryStore, versions: Collection[str]) -> dict[str, list[VersionRuns]]:
    """Each of ``versions`` (prompt version ids) → its models' runs, the most run model first;
    a version never run is left out. HistoryError when the file cannot be read."""
    wanted = sorted({v for v in versions if v})
    # (version, model) → [runs, checked, passed]; the offline model's single runs carry no
    # model name, only their backend ("scripted", the word its test-set results carry).
    tally: dict[tuple[str, str], list[int]] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = tuple(wanted[start : start + _CHUNK])
        marks = ", ".join("?" for _ in chunk)
        for query in (_RESULTS, _RUNS):
            for version, model, backend, passed, runs in store.read(
                query.format(marks=marks), chunk
            ):
                counts = tally.setdefault((version, model or backend or ""), [0, 0, 0])
                counts[0] += runs
                if passed is not None:
                    counts[1] += runs
                    counts[2] += runs * int(passed)
    found: dict[str, list[VersionRuns]] = {}
    for (version, model), (runs, checked, passed) in sorted(
        tally.items(), key=lambda item: (item[0][0], -item[1][0], item[0][1])
    ):
        found.setdefault(version, []).append(VersionRuns(version, model, runs, checked, passed))
    return found
