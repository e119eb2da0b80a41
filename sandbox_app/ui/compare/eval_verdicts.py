"""The Test set tab's verdicts: under the grid, the arms one factor apart (two prompt versions
on one model, two models on one version) compared case by case, in the same sentences
``react-sandbox eval`` prints after its lane rows (core/comparing/report_lines.py
``within_lines``), a prompt version said by the name the scenario's prompt history gives it;
then, when the scenario is judged, the judge's agreement with the human grades of its runs
(ui/grading/judge_agreement.py).

Live as results come in: each result is counted into its arm's and case's cell as it ends
(``Cells.count``: a re-run's earlier result taken out first), and the comparisons are made
again only when the panel redraws its summary (at most every quarter second, and waited on
a hundredfold what it took; the cells hold cases × arms, never a result). Measured on 10,000
results (2 arms × 1,000 cases × 5 repeats, arms with every lane setting): counting one
~5 µs (47 ms for all 10,000, spread over the runs as they end), comparing 4–6 ms a redraw;
counting every result again at each redraw (``cells_of``) would take ~50 ms a redraw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QWidget

from sandbox_app.core.comparing.arm_diff import ArmComparison, Cells, verdict_document
from sandbox_app.core.comparing.report_lines import compared_within, within_lines
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.scenarios.prompt_versions import names_of
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.grading.judge_agreement import Kept, agreement_line


class ArmVerdicts:
    """``label``: the sentences (hidden while there is nothing to compare); the scenario is
    asked at each redraw for its prompt history's names (a version named since says so)."""

    def __init__(
        self,
        scenario: Callable[[], Scenario],
        parent: QWidget | None = None,
        history: Kept | None = None,
    ):
        """``history``: where the judge's agreement with the human grades is counted from
        (ui/grading/judge_agreement.py), said under the verdicts; None: not said."""
        self._scenario, self._history = scenario, history
        self.cells = Cells()
        self.comparisons: list[ArmComparison] = []
        self.label = plain_label("", parent)
        self.label.setWordWrap(True)
        self.label.setToolTip("The arms one factor apart, compared case by case (95 % interval)")
        self.label.hide()

    def add(self, result: EvalResult, replaced: EvalResult | None = None) -> None:
        if replaced is not None:  # a re-run: its earlier result no longer counts
            self.cells.count(replaced, -1)
        self.cells.count(result)

    def show(self, cells: Cells) -> None:
        """A past evaluation's cells, in place of the runs counted before."""
        self.cells = cells
        self.draw()

    def clear(self) -> None:
        self.show(Cells())

    def draw(self) -> None:
        scenario = self._scenario()
        self.comparisons = compared_within(self.cells, names_of(scenario.prompt_history))
        lines = within_lines(self.comparisons)
        if judge := self.judge_line():
            lines.append(judge)
        self.label.setText("\n".join(lines))
        self.label.setVisible(bool(lines))

    def judge_line(self) -> str:
        """The judge's agreement with the human grades ("": nothing judged, or not known)."""
        history = self._history
        return agreement_line(self._scenario(), history) if history is not None else ""

    def lines(self) -> list[str]:
        return within_lines(self.comparisons)

    def documents(self) -> list[dict[str, Any]]:
        """What the HTML report and ``eval --json`` carry of each comparison, made now."""
        self.draw()
        return [verdict_document(c) for c in self.comparisons]
