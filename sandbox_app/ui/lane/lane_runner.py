"""One lane's runs, written once for the Run tab and every compare lane: the model panel's
backend and settings over the workspace's scenario, run in the lane's pane through
application/run_builder.py, with who approves, the fork and step-through wiring and the key
confirmation in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QVBoxLayout

from sandbox_app.application.lane_policy import LanePolicy, Versions
from sandbox_app.core.running.events import RunFinished
from sandbox_app.core.running.fork import ForkPoint
from sandbox_app.core.scenarios.prompt_versions import VersionError
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.setting_rules import SettingError
from sandbox_app.core.tools import Tool
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.grading.grade_bar import GradeBar
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.lane.run_pane import RunPane

if TYPE_CHECKING:  # the rest is imported when first used, off the first frame's path
    from sandbox_app.application.backend_choice import BackendChoice
    from sandbox_app.application.history import History
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.core.running.records import RunRecord
    from sandbox_app.ui.lane.key_confirmation import KeyConfirmation


class LaneRunner:
    """Starts a lane's runs. ``name`` names the lane in approval dialogs ("" on the Run tab);
    ``pace`` is the offline model's pace (View → Pace), asked at each start; ``confirm``
    asks before a key goes to a server a scenario file named (None: nothing to confirm);
    ``before`` runs first (a lane showing a recording goes back to its own settings);
    ``started`` hears of each choice a run was started with; ``run_log`` is the history
    database each finished run is stored in (ui/history/history_actions.py; None: none)."""

    def __init__(
        self,
        name: str,
        panel: BackendPanel,
        pane: RunPane,
        workspace: QtWorkspace,
        pace: Callable[[Scenario], Scenario],
        confirm: KeyConfirmation | None = None,
        before: Callable[[], None] = lambda: None,
        started: Callable[[BackendChoice], None] = lambda _choice: None,
        run_log: Callable[[], History | None] = lambda: None,
    ) -> None:
        self.name, self.panel, self.pane, self.workspace = name, panel, pane, workspace
        self.pace, self.confirm, self.before, self.started = pace, confirm, before, started
        self.run_log = run_log
        self.dropped = False  # the lane was removed: a start still waiting on a dialog is not
        # A fork, or a step-through's next step, stays in the lane it was asked in.
        pane.forkRequested.connect(lambda point: self.run(1, point))
        pane.stepRequested.connect(lambda: self.run(1))
        # Recording the version each start is told and grading each finished run: the
        # application's policy (shared with `run`); the lane only shows.
        workspace_versions = Versions(
            lambda: workspace.model.scenario.prompt_history,
            lambda history: workspace.update(prompt_history=history),
        )
        self.policy = LanePolicy(name or "Run tab", run_log, workspace_versions)
        pane.runFinished.connect(self._grade)
        # A person's 👍/👎 and note on the run shown, under its answer (after _grade stored it).
        self.grades = GradeBar(pane, self._store)
        rows = pane.layout()
        assert isinstance(rows, QVBoxLayout)
        rows.insertWidget(rows.indexOf(pane.answer_status) + 1, self.grades)
        # The trace's menu: Add to test set… makes a case of a run shown here.
        pane.add_case = self._add_to_test_set
        panel.health_line.subject = self._health_subject  # the context this lane's run needs

    def _store(self) -> HistoryStore | None:
        log = self.run_log()
        return log.store if log is not None else None

    def _add_to_test_set(self, record: RunRecord) -> object:
        from sandbox_app.ui.lane.add_to_test_set import open_add_to_test_set

        return open_add_to_test_set(record, self.workspace, self.pane)

    def _health_subject(self) -> tuple[Scenario, list[Tool]]:
        """The scenario a run in this lane would have (its settings applied) and its tools."""
        model = self.workspace.model
        try:
            spec = self.panel.choice().spec(
                model.scenario, sources=model.sources, extra_tools=model.extra_tools
            )
        except (VersionError, SettingError):  # a run cannot be made: the run says so itself
            return model.scenario, model.tools()
        return spec.scenario, spec.tools()

    def run(self, repeats: int = 1, fork: ForkPoint | None = None) -> None:
        if self.pane.running:
            self.pane.stepper.run_to_end()  # Run at a pause: on to the end
            return
        self.before()
        if self.confirm is None:
            self._run_now(repeats, fork)
            return

        def go() -> None:
            if not (self.dropped or self.pane.running):  # it may come after another start
                self._run_now(repeats, fork)

        self.confirm.then([self.panel.choice().config], self.name, go)

    def _run_now(self, repeats: int, fork: ForkPoint | None) -> None:
        model, name, parent = self.workspace.model, self.name, self.pane.window()

        # The dialogs' module loads when first asked for: not on the first frame's path.
        async def approve(tool: str, input: str) -> bool:
            from sandbox_app.ui.tools.approval import ask_approval

            return await ask_approval(parent, tool, input, name)

        async def ask(tool: str, input: str) -> str | None:
            from sandbox_app.ui.tools.approval import ask_observation

            return await ask_observation(parent, tool, input, name)

        choice = self.panel.choice()
        try:
            spec = choice.spec(
                self.pace(model.scenario),
                sources=model.sources,
                extra_tools=model.extra_tools,
                approve=approve,
                ask=ask,
                trusted=frozenset(model.trusted),
                fork=fork,
                pause=self.pane.stepper.pause,
            )
        # A pinned version the history no longer has, a setting the backend cannot send.
        except (VersionError, SettingError) as err:
            self.pane.step_label.setText(f"⚠ Not run: {err}")
            return
        self.started(choice)
        self.policy.started(spec, repeats)  # its version joins the history, saved with the file
        self.pane.run(spec, choice.server_name, repeats)

    def _grade(self, event: RunFinished) -> None:
        """An answer checked against the expected one counts for the version's pass rate."""
        self.policy.finished(event.answer, self.pane.history.latest)
