"""View → History…: past evaluations, newest first (date, scenario, prompt versions, lanes, pass
rate with its 95 % interval, by case when cases repeat), one opened into the Test set grid or as
a **Matrix view…** (ui/results/: cases × arms, the chart), **Compare with…** another (arm by
arm: flips_dialog.py), **Set as baseline** (the evaluation later ones of its scenario are
compared with, here and by ``eval --baseline latest``: "· baseline" in its "#" cell), and a
pass-rate trend per prompt version × model. The database in use is named at the top; Choose…
picks another.

Compare with… from one evaluation compares it with its scenario's marked baseline straight
away (the comparison a baseline is marked for; two selected rows choose any other pair);
with no baseline marked, or the baseline itself selected, it offers every other evaluation.

Every scenario title, lane and question came from a file: table items (plain text) and
``plain_label`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.history import History
from sandbox_app.core.comparing.arms import lane_title, version_label
from sandbox_app.core.comparing.evaluations import version_names
from sandbox_app.core.estimates.pass_rates import rate_by_case, share_words
from sandbox_app.core.history.history_arms import (
    CaseSpread,
    baselines,
    marked_baseline,
    set_baseline,
)
from sandbox_app.core.history.history_db import EvaluationRow, HistoryStore
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.history.flips_dialog import FlipsDialog
from sandbox_app.ui.history.spreads_reader import SpreadsReader


class Actions(Protocol):
    """The window's history (ui/history/history_actions.py's HistoryActions)."""

    def current(self) -> History: ...

    def choose(self, path: Path) -> History: ...

    def show_in_grid(
        self, title: str, labels: list[str], store: HistoryStore, evaluation: int
    ) -> bool: ...

    def version_names(self) -> Mapping[str, str]: ...


COLUMNS = ("#", "Date", "Scenario", "Prompt versions", "Lanes", "Runs", "Pass rate (95% CI)")
TREND_COLUMNS = ("Prompt version", "Model", "Pass rate, evaluation by evaluation", "Latest")


class HistoryView(QDialog):
    def __init__(self, actions: Actions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("History")
        self.resize(1000, 620)
        self.history_actions = actions
        self.rows: list[EvaluationRow] = []
        self.flips: FlipsDialog | None = None
        self.where = plain_label()
        self.problem = plain_label()
        self.problem.setWordWrap(True)
        self.choose_button = QPushButton("Choose…")
        self.choose_button.setToolTip("Use another history database (kept in the settings)")
        self.table = _table(COLUMNS)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.open_button = QPushButton("Open in grid")
        self.open_button.setToolTip("Show this evaluation's results in the Test set grid")
        self.matrix_button = QPushButton("Matrix view…")
        self.matrix_button.setToolTip("Every case × arm (k/N, the latest answer) and the chart")
        self.compare_button = QPushButton("Compare with…")
        self.compare_button.setToolTip(
            "Arm by arm with another evaluation: its scenario's baseline when one is marked "
            "(two selected: those two)"
        )
        self.baseline_button = QPushButton("Set as baseline")
        self.baseline_button.setToolTip(
            "Compare later evaluations of this scenario with this one (Compare with…, "
            "eval --baseline latest)"
        )
        self.pairwise_button = QPushButton("Pairwise review…")
        self.pairwise_button.setToolTip(
            "Two lanes' answers to each case side by side, sides hidden: choose the better"
        )
        self.refresh_button = QPushButton("Refresh")
        self.trend = _table(TREND_COLUMNS)
        top = QHBoxLayout()
        top.addWidget(self.where, 1)
        top.addWidget(self.choose_button)
        buttons = QHBoxLayout()
        for button in (
            self.open_button,
            self.matrix_button,
            self.compare_button,
            self.baseline_button,
            self.pairwise_button,
        ):
            buttons.addWidget(button)
        buttons.addWidget(self.refresh_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.problem)
        layout.addWidget(self.table, 3)
        layout.addLayout(buttons)
        layout.addWidget(_heading("Pass rate by prompt version × model"))
        layout.addWidget(self.trend, 2)
        self.choose_button.clicked.connect(self._choose)
        self.refresh_button.clicked.connect(self.refresh)
        self.open_button.clicked.connect(lambda: self.open_in_grid(self.selected()[0]))
        self.compare_button.clicked.connect(self._compare_clicked)
        self.baseline_button.clicked.connect(lambda: self.set_baseline(self.selected()[0]))
        self.matrix_button.clicked.connect(lambda: self.open_matrix(self.selected()[0]))
        self.pairwise_button.clicked.connect(lambda: self.review(self.selected()[0]))
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.cellDoubleClicked.connect(lambda row, _c: self.open_in_grid(self.rows[row].id))
        self.spreads = SpreadsReader(self)
        self.spreads.came.connect(self._show_intervals)
        self.finished.connect(self.spreads.stop)

    @property
    def store(self) -> HistoryStore | None:
        return self.history_actions.current().store

    def refresh(self) -> None:
        history = self.history_actions.current()
        self.where.setText(f"Database: {history.path}")
        self.problem.setText(history.problem)
        self.problem.setVisible(bool(history.problem))
        try:
            self.rows = self.store.evaluations() if self.store else []
            trend = self.store.trend() if self.store else []
            marked = baselines(self.store) if self.store else set()
        except HistoryError as err:
            self.problem.setText(str(err))
            self.problem.show()
            self.rows, trend, marked = [], [], set()
        self.table.setRowCount(len(self.rows))
        named: dict[str, dict[str, str]] = {}  # each scenario file's version names, read once
        window = self.history_actions.version_names()
        for r, row in enumerate(self.rows):
            if row.scenario_path not in named:
                named[row.scenario_path] = {**version_names(row.scenario_path), **window}
            names = named[row.scenario_path]
            versions = ", ".join(version_label(v, names) for v in row.versions) or "—"
            cells = (
                f"{row.id}" + (" · baseline" if row.id in marked else ""),
                row.started[:16].replace("T", " ") + ("" if row.finished else " (not finished)"),
                row.scenario_title,
                versions,
                ", ".join(lane_title(lane) for lane in row.lanes),
                f"{row.runs}",
                share_words(row.passed, row.runs)[:-1] + ", …)",  # its interval once counted
            )
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        if self.store is not None and self.rows:
            self.spreads.ask(self.store.path)
        self._draw_trend(trend, window)

    def _show_intervals(self, number: int, answer: object) -> None:
        """Each pass rate with its interval by case, once counted (a newer count coming:
        nothing; a count that failed: said above the list, the rates left as they are)."""
        if number != self.spreads.asked:
            return
        if isinstance(answer, HistoryError):
            self.problem.setText(f"Intervals not counted: {answer}")
            self.problem.show()
            return
        spreads: dict[tuple[int, str], CaseSpread] = answer  # type: ignore[assignment]
        for r, row in enumerate(self.rows):
            item = self.table.item(r, len(COLUMNS) - 1)
            if item is not None:
                item.setText(rate_by_case(spreads.get((row.id, ""), {})))
        self._update_buttons()

    def _draw_trend(
        self, trend: list[tuple[str, str, int, str, int, int]], names: Mapping[str, str]
    ) -> None:
        series: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
        for version, model, evaluation, _started, runs, passed in trend:
            series.setdefault((version, model), []).append((evaluation, runs, passed))
        self.trend.setRowCount(len(series))
        for r, ((version, model), points) in enumerate(sorted(series.items())):
            steps = " → ".join(f"#{e} {p / n:.0%}" for e, n, p in points if n)
            _, runs, passed = points[-1]
            latest = share_words(passed, runs)  # no interval: its cases are not counted here
            cells = (version_label(version, names), model or "—", steps, latest)
            for c, text in enumerate(cells):
                self.trend.setItem(r, c, QTableWidgetItem(text))
        self.trend.resizeColumnsToContents()  # the steps whole, never cut at a default width

    def selected(self) -> list[int]:
        """The selected evaluations' ids, in the table's order (newest first)."""
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        return [self.rows[r].id for r in rows if r < len(self.rows)]

    def select(self, *ids: int) -> None:
        self.table.clearSelection()
        mode = self.table.selectionMode()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for r, row in enumerate(self.rows):
            if row.id in ids:
                self.table.selectRow(r)
        self.table.setSelectionMode(mode)

    def _update_buttons(self) -> None:
        chosen = len(self.selected())
        self.open_button.setEnabled(chosen == 1)
        self.baseline_button.setEnabled(chosen == 1)
        self.matrix_button.setEnabled(chosen == 1)
        self.pairwise_button.setEnabled(chosen == 1)
        self.compare_button.setEnabled(chosen == 2 or (chosen == 1 and len(self.rows) > 1))

    def open_in_grid(self, evaluation: int) -> bool:
        """Show evaluation ``evaluation`` in the Test set grid: the grid reads its results'
        summary rows, and a cell's trace only when it is clicked."""
        store = self.store
        if store is None:
            return False
        try:
            row = store.evaluation(evaluation)
        except HistoryError as err:
            self.problem.setText(str(err))
            self.problem.show()
            return False
        title = f"#{row.id} · {row.started[:16].replace('T', ' ')} · {row.scenario_title}"
        return self.history_actions.show_in_grid(title, row.lanes, store, evaluation)

    def set_baseline(self, evaluation: int) -> None:
        """Mark ``evaluation`` as its scenario's baseline (the one before it no longer is)."""
        store = self.store
        if store is None:
            return
        try:
            set_baseline(store, evaluation)
        except HistoryError as err:
            self.problem.setText(str(err))
            self.problem.show()
            return
        self.refresh()
        self.select(evaluation)

    def open_matrix(self, evaluation: int) -> QDialog | None:
        """Evaluation ``evaluation`` as a matrix of cases × arms, and its chart (their
        modules, and the plotting library, imported now: never at start-up)."""
        from sandbox_app.ui.results.matrix_dialog import open_stored

        store = self.store
        try:
            names = self.history_actions.version_names()
            return open_stored(store, evaluation, names, self) if store else None
        except HistoryError as err:
            self.problem.setText(str(err))
            self.problem.show()
            return None

    def review(self, evaluation: int, pair: tuple[str, str] | None = None) -> QDialog | None:
        """The blind pairwise review of two of ``evaluation``'s lanes (ui/grading/): ``pair``,
        else its two lanes, else the pair the user picks."""
        from sandbox_app.ui.grading.pairwise_review import open_review

        store = self.store
        return open_review(store, evaluation, self, pair) if store is not None else None

    def _compare_clicked(self) -> None:
        chosen = self.selected()
        if len(chosen) == 2:  # older → newer: what changed since
            self.compare(min(chosen), max(chosen))
            return
        try:
            base = marked_baseline(self.store, chosen[0]) if self.store else None
        except HistoryError:
            base = None  # the menu, then; opening the comparison says what is wrong
        if base is not None:  # the baseline → this one, whichever is older
            self.compare(base, chosen[0])
            return
        menu = QMenu(self)
        for row in self.rows:
            if row.id != chosen[0]:
                text = f"#{row.id} · {row.started[:16].replace('T', ' ')} · {row.scenario_title}"
                action = menu.addAction(text.replace("&", "&&"))  # an & is not a mnemonic
                action.triggered.connect(
                    lambda _=False, other=row.id: self.compare(
                        min(chosen[0], other), max(chosen[0], other)
                    )
                )
        menu.popup(self.compare_button.mapToGlobal(self.compare_button.rect().bottomLeft()))

    def compare(self, first: int, second: int) -> FlipsDialog | None:
        """The runs that flipped from evaluation ``first`` to ``second``."""
        store = self.store
        if store is None:
            return None
        try:
            names = self.history_actions.version_names()
            self.flips = FlipsDialog(store, first, second, names, self)
        except HistoryError as err:
            self.problem.setText(str(err))
            self.problem.show()
            return None
        self.flips.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.flips.show()
        return self.flips

    def _choose(self) -> None:
        history = self.history_actions.current()
        path, _ = QFileDialog.getSaveFileName(
            self,
            "History database",
            str(history.path),
            "SQLite database (*.sqlite3 *.db);;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite,  # an existing one is opened
        )
        if path:
            self.history_actions.choose(Path(path))
            self.refresh()


def _table(columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _heading(text: str) -> QLabel:
    label = plain_label(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label
