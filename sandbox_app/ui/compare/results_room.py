"""The comparison's split between its lanes and its results, and presenter mode's share.

The lanes take the height and the results' tabs (the table, the test set) a strip under them.
On a projector that strip showed the Test set tab's buttons and summary and none of its grid:
while presenter mode is on and the Test set tab is shown, the results take all the height
but the lanes' least (or a sixth; the lanes scroll), and all of it under 500 px (the lanes
folded away, View → Restore collapsed panels or a drag brings them back): at 800×600 and
presenter type, half showed the tab's buttons and summary and not one case. The split before
is given back when either ends, unless the user moved the split meanwhile: theirs is kept.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter, QTabWidget, QWidget

TEST_SET_TAB = 1
SHORT = 500  # px: a split this short shows the results alone


class ResultsRoom:
    def __init__(self, splitter: QSplitter, lanes: QWidget, results: QTabWidget) -> None:
        self.splitter, self.lanes, self.results = splitter, lanes, results
        splitter.addWidget(lanes)
        splitter.addWidget(results)
        splitter.setStretchFactor(0, 1)
        splitter.setSizes([560, 150])
        self.presenting = False
        self._before: list[int] | None = None  # the split presenter mode changed
        results.currentChanged.connect(lambda _index: self._fit())
        splitter.splitterMoved.connect(self._on_splitter_moved)

    def set_presenting(self, on: bool) -> None:
        self.presenting = on
        self._fit()

    def _fit(self) -> None:
        wanted = self.presenting and self.results.currentIndex() == TEST_SET_TAB
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if wanted and self._before is None and total > 0:
            least = self.lanes.minimumSizeHint().height()
            lanes = 0 if total < SHORT else max(least, total // 6)
            results = max(sizes[1], total - lanes)
            if results != sizes[1]:
                self._before = sizes
                self.splitter.setSizes([total - results, results])
        elif not wanted and self._before is not None:
            self.splitter.setSizes(self._before)
            self._before = None

    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self._before = None  # the user's split, kept
