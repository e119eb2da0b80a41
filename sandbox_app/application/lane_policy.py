"""What happens around a lane's runs, whichever front end starts them (no Qt): the prompt
version each start is told joins the scenario's history (counted by its runs), and each
finished run is graded by the scenario's expected answer, stored in the run history with its
verdict and, when it gave one, counted for its version's pass rate.

The window's Run tab and every compare lane (ui/lane/lane_runner.py) and ``react-sandbox run``
(cli/run_command.py) share it; the window alone keeps versions in the scenario file (``run``
leaves the file as it is). ``eval``'s runs are graded by their case's answer, checks and judge
(application/eval_runner.py), a verdict of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sandbox_app.core.scenarios.prompt_versions import History as PromptHistory
from sandbox_app.core.scenarios.prompt_versions import graded, record

if TYPE_CHECKING:  # the run history's database: opened when a run finishes, not at start-up
    from sandbox_app.application.history import History
    from sandbox_app.application.run_builder import RunSpec
    from sandbox_app.core.running.records import RunRecord
    from sandbox_app.core.scenarios.scenario import Expected


@dataclass(frozen=True)
class Versions:
    """The scenario's prompt history where a front end keeps it: read now, and written back
    (the window's workspace, saved with the file)."""

    read: Callable[[], PromptHistory]
    write: Callable[[PromptHistory], None]


class LanePolicy:
    """One lane's policy. ``place`` names the lane in the run history ("Run tab", a lane's
    title, "react-sandbox run"); ``run_log`` is the run history each finished run is stored in
    (None: none); ``versions`` where the prompt versions are kept (None: not kept)."""

    def __init__(
        self,
        place: str,
        run_log: Callable[[], History | None] = lambda: None,
        versions: Versions | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.place, self.run_log, self.versions, self.now = place, run_log, versions, now
        # The version and expected answer of the runs going now: each answer is graded for it.
        self._grading: tuple[str, Expected | None] = ("", None)

    def started(self, spec: RunSpec, repeats: int = 1) -> None:
        """``repeats`` runs of ``spec`` start: the version they are told joins the history
        (one that differs from the last is added; the same one counts these runs)."""
        self._grading = (spec.prompt_version.id, spec.scenario.expected)
        if self.versions is not None:
            kept = self.versions.read()
            self.versions.write(record(kept, spec.prompt_version, self.now(), repeats))

    def finished(self, answer: str | None, run: RunRecord | None) -> bool | None:
        """A run of the last start ended with ``answer``: its verdict by the expected answer
        (None: nothing to check, or no answer), the run stored with it (a replayed one is not
        stored again), and a verdict counted for the version's pass rate."""
        from sandbox_app.core.results.verdict import run_verdict

        version_id, expected = self._grading
        passed = run_verdict(answer, expected)
        log = self.run_log()
        if log is not None and run is not None and not run.replayed:
            log.run_finished(self.place, run, passed)  # with its document
        if passed is not None and version_id and self.versions is not None:
            self.versions.write(graded(self.versions.read(), version_id, passed))
        return passed
