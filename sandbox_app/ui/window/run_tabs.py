"""The Run tab and the comparison as the window's helpers see them (menus, recordings,
presenter): which runs are on screen, their panes, bringing one forward, how the lanes show.

The window builds this over the tabs it lays out, so the helpers never hold the window, its
tab widget, its splitter or the comparison's list of lanes: a change of layout changes this
module and the window, not every helper.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QTabWidget

from sandbox_app.ui.trace.trace_view import TraceView

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from sandbox_app.core.results.exports import Comparison, EvalResults
    from sandbox_app.core.running.recording import Recording
    from sandbox_app.core.scenarios.scenario import Scenario
    from sandbox_app.ui.compare.compare_view import CompareView
    from sandbox_app.ui.lane.run_pane import RunPane


class RunTab(Protocol):
    """What exporting needs of the window (MainWindow is one): the Run tab's pane, the
    scenario being edited (for a run kept without its own) and the status line it answers on."""

    @property
    def run_pane(self) -> RunPane: ...

    def current_scenario(self) -> Scenario: ...

    def statusBar(self) -> QStatusBar: ...


class RunTabs:
    def __init__(
        self,
        tabs: QTabWidget,
        run_pane: RunPane,
        compare: Callable[[], CompareView],
        built: Callable[[], CompareView | None],
    ) -> None:
        """``compare`` gives the comparison, building it on first use; ``built`` gives it only
        if it was built already (its lanes are not worth building to answer a question)."""
        self.run_pane = run_pane
        self._tabs, self._compare, self._built = tabs, compare, built

    def comparing(self) -> bool:
        """The comparison is on screen (not the Run tab)."""
        built = self._built()
        return built is not None and self._tabs.currentWidget() is built

    def panes(self) -> list[RunPane]:
        """The runs on screen: each compare lane's pane, or the Run tab's."""
        if self.comparing():
            return [lane.pane for lane in self._compare().lanes]
        return [self.run_pane]

    def show_run_tab(self) -> None:
        self._tabs.setCurrentWidget(self.run_pane)

    def play_comparison(self, recording: Recording, speed: float) -> None:
        """The comparison brought forward, playing ``recording`` in its lanes."""
        compare = self._compare()
        self._tabs.setCurrentWidget(compare)
        compare.play(recording, speed)

    def comparison(self) -> Comparison | None:
        """The comparison as its exports read it; None when it was never built."""
        built = self._built()
        return built.exported() if built is not None else None

    def test_set_results(self) -> EvalResults | None:
        """The Test set tab's results; None when the comparison was never built."""
        built = self._built()
        return built.eval_panel.exported() if built is not None else None

    def lane_count(self) -> int:
        return len(self._compare().lanes)

    def set_presenting(self, on: bool) -> None:
        """Presenter mode: the comparison's Test set tab takes half its height (if built)."""
        compare = self._built()
        if compare is not None:
            compare.results_room.set_presenting(on)

    def set_one_lane(self, on: bool) -> None:
        """Compare lanes one at a time, full width (or side by side)."""
        self._compare().strip.set_one_lane(on)

    def set_show_thinking(self, on: bool) -> None:
        """Unfold the model's thinking in the Run tab and every lane, or fold it to one line."""
        TraceView.show_thinking_default = on  # for lanes built later
        built = self._built()
        lanes = built.lanes if built is not None else []
        for trace in (self.run_pane.trace, *(lane.trace for lane in lanes)):
            trace.set_show_thinking(on)

    def find_in_trace(self) -> None:
        """Edit → Find in trace: the bar under the trace with the focus, else the Run tab's."""
        self._searched().traces.open_find()

    def go_to_step(self) -> None:
        self._searched().traces.open_step()

    def _searched(self) -> RunPane:
        from PySide6.QtWidgets import QApplication

        built, focus = self._built(), QApplication.focusWidget()
        for pane in [lane.pane for lane in built.lanes] if built is not None else []:
            if focus is not None and pane.isAncestorOf(focus):
                return pane
        self.show_run_tab()
        return self.run_pane
