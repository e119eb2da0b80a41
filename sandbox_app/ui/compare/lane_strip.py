"""The compare lanes' strip: side by side (scrolling sideways when they do not fit), or one
lane at a time, full width, chosen by a tab (presenter mode with three or four lanes), each
lane's chrome then one line (``LaneWidget.set_compact``).

Side by side, each lane keeps the width its buttons need and the strip scrolls: squeezed
lanes cut their titles and status text. One at a time, the hidden lanes go on running.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QSplitter, QTabBar, QVBoxLayout, QWidget

from sandbox_app.ui.lane.lane_widget import LaneWidget


class LaneStrip(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lanes: list[LaneWidget] = []
        self.one_lane = False
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)  # a lane dragged to nothing is lost
        self.area = QScrollArea()  # four lanes on a small screen scroll instead of squeezing
        self.area.setWidget(self.splitter)
        self.area.setWidgetResizable(True)
        self.tabs = QTabBar()  # one lane at a time: which
        self.tabs.setExpanding(False)
        self.tabs.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.tabs)
        layout.addWidget(self.area, 1)
        self.tabs.currentChanged.connect(self._show_current)

    def add(self, lane: LaneWidget) -> None:
        self.lanes.append(lane)
        self.splitter.addWidget(lane)
        lane.set_compact(self.one_lane)
        self._retab()

    def remove(self, lane: LaneWidget) -> None:
        self.lanes.remove(lane)
        lane.setParent(None)
        self._retab()

    def set_one_lane(self, on: bool) -> None:
        self.one_lane = on
        self.tabs.setVisible(on)
        for lane in self.lanes:
            lane.set_compact(on)  # full width on a projector: the trace needs the height
        self._show_current()

    def _retab(self) -> None:
        current = self.tabs.currentIndex()
        self.tabs.blockSignals(True)
        while self.tabs.count():
            self.tabs.removeTab(0)
        for lane in self.lanes:
            self.tabs.addTab(lane.name)
        self.tabs.setCurrentIndex(min(max(current, 0), len(self.lanes) - 1))
        self.tabs.blockSignals(False)
        self._show_current()

    def _show_current(self) -> None:
        current = self.tabs.currentIndex()
        for i, lane in enumerate(self.lanes):
            lane.setVisible(not self.one_lane or i == current)
