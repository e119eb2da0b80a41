"""The test set's results grid (cases × lanes) as a model and its view: 100,000 runs without a
widget or a string per cell.

:class:`EvalGridModel` holds each cell as two bit masks (the repeats run, the repeats passed:
"pass", "fail" or "k/N" come from them) and nothing else; Qt asks only for the cells on
screen. A cell's tooltip (each repeat's answer and the checks it failed) is made when it is
shown, from results fetched then (``fetch``). :class:`EvalGrid` is the view, with the
calls a ``QTableWidget`` had (``item(row, column).text()``, ``cellClicked``) so the window's
tests and callers read it as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from sandbox_app.core.results.checks import described
from sandbox_app.core.results.eval_report import cell_text
from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.ui.common.plain import tip
from sandbox_app.ui.common.theme import pass_shade

Index = QModelIndex | QPersistentModelIndex
# A cell's results when its tooltip is shown: (case, lane) → each repeat's result, in order.
Fetch = Callable[[int, str], Sequence[EvalResult]]


class EvalGridModel(QAbstractTableModel):
    """Column 0 the question, then one column per lane; a row per case."""

    def __init__(self, fetch: Fetch, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._fetch = fetch
        self._questions: list[str] = []
        self._lanes: list[str] = []
        self._ran: list[int] = []  # per cell (row * lanes + lane): a bit per repeat run
        self._passed: list[int] = []  # … and a bit per repeat passed

    def reset(self, questions: Sequence[str], lanes: Sequence[str], keep: bool = False) -> None:
        """Every cell empty ("—"): a new test set, new lanes, or a run of all of it;
        ``keep``: the verdicts stay where the lanes are the same (the questions redrawn)."""
        self.beginResetModel()
        kept = keep and list(lanes) == self._lanes
        self._questions, self._lanes = list(questions), list(lanes)
        size = len(self._questions) * len(self._lanes)
        pad = [0] * max(0, size - len(self._ran))
        self._ran = [*self._ran[:size], *pad] if kept else [0] * size
        self._passed = [*self._passed[:size], *pad] if kept else [0] * size
        self.endResetModel()

    def add(self, case: int, lane: int, repeat: int, passed: bool) -> None:
        """A run's verdict (a re-run's replaces its repeat's); :meth:`changed` redraws."""
        cell = case * len(self._lanes) + lane
        bit = 1 << repeat
        self._ran[cell] |= bit
        self._passed[cell] = (self._passed[cell] & ~bit) | (bit if passed else 0)

    def set_cell(self, case: int, lane: int, ran: int, passed: int) -> None:
        """A cell's masks as a past evaluation left them (reset draws them)."""
        cell = case * len(self._lanes) + lane
        self._ran[cell], self._passed[cell] = ran, passed & ran

    def changed(self, cells: Iterable[tuple[int, int]]) -> None:
        """Redraw these (case, lane) cells: one signal for the rows they span (the view
        repaints only what of it is on screen)."""
        rows = [case for case, _ in cells]
        if rows:
            last = self.columnCount() - 1
            self.dataChanged.emit(self.index(min(rows), 1), self.index(max(rows), last))

    def text(self, case: int, lane: int) -> str:
        cell = case * len(self._lanes) + lane
        ran, passed = self._ran[cell], self._passed[cell]
        count = ran.bit_count()
        won = passed.bit_count()
        return cell_text([True] * won + [False] * (count - won))

    def shade(self, case: int, lane: int) -> QColor | None:
        """The cell's background: graded by the share of its repeats that passed (4/5 is not
        0/5), in the application palette's theme; none before a run."""
        cell = case * len(self._lanes) + lane
        ran = self._ran[cell].bit_count()
        if not ran:
            return None
        return pass_shade(self._passed[cell].bit_count() / ran, QGuiApplication.palette())

    def runs(self) -> int:
        """How many runs have a verdict (each cell's repeats)."""
        return sum(ran.bit_count() for ran in self._ran)

    def resumable(self, repeats: int) -> bool:
        """Some runs have a verdict and some of every case × lane × ``repeats`` have none."""
        return 0 < self.runs() < len(self._questions) * len(self._lanes) * repeats

    def failed_runs(self) -> int:
        pairs = zip(self._ran, self._passed, strict=True)
        return sum((ran & ~passed).bit_count() for ran, passed in pairs)

    def verdicts(self) -> Verdicts:
        """Each run's verdict now, as a mapping (a copy: runs go on ending)."""
        return Verdicts(list(self._lanes), list(self._ran), list(self._passed))

    def repeats(self, case: int, lane: int) -> list[tuple[int, bool]]:
        """A cell's runs: (repeat, passed) in repeat order."""
        cell = case * len(self._lanes) + lane
        ran, passed = self._ran[cell], self._passed[cell]
        return [(r, bool(passed >> r & 1)) for r in range(ran.bit_length()) if ran >> r & 1]

    def failing(self, case: int) -> bool:
        """Whether a case has a failed run on any lane (the Failures only filter)."""
        start = case * len(self._lanes)
        return any(
            self._ran[cell] != self._passed[cell] for cell in range(start, start + len(self._lanes))
        )

    def question(self, case: int) -> str:
        return self._questions[case]

    def lane(self, column: int) -> str:
        return self._lanes[column - 1]

    # ---- QAbstractTableModel --------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._questions)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 1 + len(self._lanes)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if column == 0:
            if role == Qt.ItemDataRole.DisplayRole:
                return self._questions[row]
            if role == Qt.ItemDataRole.ToolTipRole:
                return tip(self._questions[row])
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column - 1)
        if role == Qt.ItemDataRole.BackgroundRole:
            return self.shade(row, column - 1)
        if role == Qt.ItemDataRole.ToolTipRole:
            # Each repeat's answer and the checks it failed: why the cell is red. Fetched now,
            # for the one cell the pointer is on, never kept.
            runs = self._fetch(row, self.lane(column))
            return tip("\n".join(described(r.answer, r.checks) for r in runs)) or None
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Vertical:
            return str(section + 1)
        return "Question" if section == 0 else self._lanes[section - 1]


@dataclass(frozen=True)
class Verdicts(Mapping[RunKey, bool]):
    """Each run's verdict from a copy of the grid's masks: what Resume and Re-run failed go
    by (core/results/evaluation.py ``pending``), with no key or result kept per run."""

    lanes: list[str]
    ran: list[int]
    passed: list[int]

    def _bit(self, key: RunKey) -> tuple[int, int] | None:
        if key.lane not in self.lanes or key.repeat < 0:
            return None
        cell = key.case * len(self.lanes) + self.lanes.index(key.lane)
        return (cell, 1 << key.repeat) if 0 <= cell < len(self.ran) else None

    def __getitem__(self, key: RunKey) -> bool:
        found = self._bit(key)
        if found is None or not self.ran[found[0]] & found[1]:
            raise KeyError(key)
        return bool(self.passed[found[0]] & found[1])

    def __iter__(self) -> Iterator[RunKey]:
        width = len(self.lanes)
        for cell, ran in enumerate(self.ran):
            for repeat in range(ran.bit_length()):
                if ran >> repeat & 1:
                    yield RunKey(self.lanes[cell % width], cell // width, repeat)

    def __len__(self) -> int:
        return sum(ran.bit_count() for ran in self.ran)


@dataclass(frozen=True)
class GridCell:
    """A cell as ``QTableWidget.item`` gave it: what it shows, read from the model now."""

    model: EvalGridModel
    row_: int
    column_: int

    def _data(self, role: Qt.ItemDataRole) -> Any:
        return self.model.data(self.model.index(self.row_, self.column_), role)

    def text(self) -> str:
        return str(self._data(Qt.ItemDataRole.DisplayRole) or "")

    def toolTip(self) -> str:
        return str(self._data(Qt.ItemDataRole.ToolTipRole) or "")

    def background(self) -> QColor | None:
        found = self._data(Qt.ItemDataRole.BackgroundRole)
        return found if isinstance(found, QColor) else None

    def row(self) -> int:
        return self.row_

    def column(self) -> int:
        return self.column_


class EvalGrid(QTableView):
    """The grid's view. Signals: cellClicked(row, column), as ``QTableWidget`` had."""

    cellClicked = Signal(int, int)

    def __init__(self, model: EvalGridModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid_model = model
        self.setModel(model)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)  # one line a case: the question's tooltip has the rest
        # Fixed row heights and widths: nothing measures every row of 10,000 cases.
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.horizontalHeader().setDefaultSectionSize(140)
        self.horizontalHeader().setStretchLastSection(False)
        self._sizing = False
        self._question_dragged = False  # the user's width for it, kept from then on
        self.horizontalHeader().sectionResized.connect(self._on_section_resized)
        model.modelReset.connect(self._size_question)
        self.clicked.connect(lambda index: self.cellClicked.emit(index.row(), index.column()))

    def _size_question(self) -> None:
        """The question column as wide as the room the results leave, between 12 and 40
        characters: never the whole width, so the results are in view beside it (presenter
        mode's larger type, a panel wider than the screen)."""
        if not self.grid_model.columnCount() or self._question_dragged:
            return
        char = self.fontMetrics().averageCharWidth()
        results = (self.grid_model.columnCount() - 1) * self.horizontalHeader().defaultSectionSize()
        room = self.viewport().width() - results
        self._sizing = True
        self.setColumnWidth(0, max(12 * char, min(40 * char, room)))
        self._sizing = False

    def _on_section_resized(self, section: int, _old: int, _new: int) -> None:
        if section == 0 and not self._sizing:
            self._question_dragged = True

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._size_question()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # zoom, presenter mode: rows fit the text
            self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
            self._size_question()

    def rowCount(self) -> int:
        return self.grid_model.rowCount()

    def columnCount(self) -> int:
        return self.grid_model.columnCount()

    def item(self, row: int, column: int) -> GridCell | None:
        if not (0 <= row < self.rowCount() and 0 <= column < self.columnCount()):
            return None
        return GridCell(self.grid_model, row, column)

    def visualItemRect(self, cell: GridCell) -> QRect:
        return self.visualRect(self.grid_model.index(cell.row(), cell.column()))
