"""The results chart: each arm's pass rate with its 95 % interval as an error bar (left), and
each arm's pass rate evaluation by evaluation from the history (right).

Drawn with pyqtgraph: a plotting library made for Qt (its plots are QGraphicsItems in a
QGraphicsView, so they live in our PySide6 window, follow its widgets' fonts and are grabbed
like any widget), pure Python on numpy, which the app already has. QtCharts, the other Qt
option, is not in the PySide6-Essentials wheel the app uses; PySide6-Addons would be a far
larger download for one chart. Imported when the Chart tab is first shown, never at start-up.

Arms are rows of the left plot (their names as its axis, which long names need), so an
interval is a horizontal bar: its two ends are the arm's interval by case
(core/comparing/case_spread.py: the repeats of a case are not independent trials), drawn when
the arms' spreads have been counted (``draw_rates``); below the plots, each arm's pass@k and
pass^k when cases repeat.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from sandbox_app.core.comparing.arms import arm_name
from sandbox_app.core.comparing.case_spread import ArmRate
from sandbox_app.core.comparing.results_matrix import MatrixSource, TrendPoint, arm_trends
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.ui.common.plain import plain_label

# Colour-blind-safe (Okabe–Ito), one per arm in order; the same arm the same colour in both.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
INK = "#202124"


def arm_colour(arm: int) -> QColor:
    return QColor(PALETTE[arm % len(PALETTE)])


def _plot(title: str) -> pg.PlotWidget:
    plot = pg.PlotWidget(background="w")
    plot.setTitle(title, color=INK)
    plot.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)  # a figure to read, not to pan
    plot.hideButtons()
    plot.showGrid(x=True, y=True, alpha=0.2)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setPen(INK)
        axis.setTextPen(INK)
    return plot


class PassChart(QWidget):
    """``source``: the evaluation's arms; ``store``: the history, for the trend (None: the
    trend plot says there is none). The rates are drawn by :meth:`draw_rates`."""

    def __init__(
        self,
        source: MatrixSource,
        names: Sequence[str],
        store: HistoryStore | None,
        versions: Mapping[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.names = list(names)  # the arms' columns' names
        # A trend line is a prompt version × model: named so, without the arm's other factors.
        self.line_names = [arm_name(arm, versions) for arm in source.arms]
        self.note = plain_label()
        self.repeats = plain_label("Counting each arm's pass rate…")  # pass@k, pass^k
        self.repeats.setWordWrap(True)  # a line per few arms, never a wider dialog
        self.rates = _plot("Pass rate, 95 % interval by case")
        self.trend = _plot("Pass rate by evaluation (prompt version × model)")
        self.bars: pg.ErrorBarItem | None = None
        try:
            trends = arm_trends(store, source.arms) if store is not None else []
        except HistoryError as err:
            trends = []
            self.note.setText(str(err))
        self.lines = self._draw_trend(trends)
        plots = QHBoxLayout()
        plots.addWidget(self.rates, 1)
        plots.addWidget(self.trend, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(plots, 1)
        layout.addWidget(self.repeats)
        layout.addWidget(self.note)

    def draw_rates(self, rates: Sequence[ArmRate]) -> pg.ErrorBarItem:
        """Each arm's pass rate and its interval (once: the spreads are counted once)."""
        if self.bars is not None:
            return self.bars
        rows = np.arange(len(rates), dtype=float)
        shares = np.array([100 * rate.rate for rate in rates])
        ends = np.array([(rate.low, rate.high) for rate in rates] or np.empty((0, 2))) * 100
        bars = pg.ErrorBarItem(
            x=shares,
            y=rows,
            left=shares - ends[:, 0] if len(ends) else shares,
            right=ends[:, 1] - shares if len(ends) else shares,
            beam=0.18,
            pen=pg.mkPen(INK, width=2),
        )
        self.rates.addItem(bars)
        brushes = [pg.mkBrush(arm_colour(i)) for i in range(len(rates))]
        dots = pg.ScatterPlotItem(x=shares, y=rows, size=12, brush=brushes, pen=pg.mkPen(INK))
        self.rates.addItem(dots)
        for i, rate in enumerate(rates):
            label = pg.TextItem(f"{rate.passed:,}/{rate.runs:,}", color=INK, anchor=(0.5, 1.3))
            label.setPos(float(shares[i]), float(rows[i]))
            self.rates.addItem(label)
        axis = self.rates.getAxis("left")
        axis.setTicks([[(float(i), _short(name)) for i, name in enumerate(self.names)]])
        # Room beyond 0 and 100 % for a dot and its k/N there; ticks only from 0 to 100.
        self.rates.setXRange(-6, 106, padding=0)
        bottom = self.rates.getAxis("bottom")
        bottom.setTicks([[(float(v), f"{v} %") for v in range(0, 101, 20)]])
        self.rates.setYRange(-0.6, max(len(rates), 1) - 0.4, padding=0)
        self.rates.getViewBox().invertY(True)  # the first arm on top, as in the matrix
        self.rates.setLabel("bottom", "runs passed", color=INK)
        repeated = [
            f"{_short(self.names[i])}: pass@{rate.k} {rate.pass_at:.0%}, pass^{rate.k} "
            f"{rate.pass_hat:.0%}"
            for i, rate in enumerate(rates)
            if rate.pass_at is not None and rate.pass_hat is not None
        ]
        self.repeats.setText(
            "At least one of k runs passes (pass@k), all k pass (pass^k), by case — "
            + " · ".join(repeated)
            if repeated
            else "One run a case: pass@k and pass^k need repeats."
        )
        self.bars = bars
        return bars

    def _draw_trend(self, trends: Sequence[tuple[int, list[TrendPoint]]]) -> list[pg.PlotDataItem]:
        legend = self.trend.addLegend(offset=(-10, 10), labelTextColor=INK)
        legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        lines: list[pg.PlotDataItem] = []
        ticks: dict[int, str] = {}
        for arm, points in trends:
            xs = [p.evaluation for p in points]
            ys = [100 * p.passed / p.runs for p in points]
            ticks.update({x: f"#{x}" for x in xs})
            colour = arm_colour(arm)
            line = self.trend.plot(
                xs,
                ys,
                pen=pg.mkPen(colour, width=2),
                symbol="o",
                symbolBrush=colour,
                symbolPen=pg.mkPen(INK),
                # A legend entry is drawn as HTML: an arm's name (from a file) escaped.
                name=html.escape(_short(self.line_names[arm])),
            )
            lines.append(line)
        self.trend.getAxis("bottom").setTicks([sorted(ticks.items())])
        self.trend.getViewBox().setDefaultPadding(0.08)  # the first and last point inside
        self.trend.setYRange(0, 100, padding=0.05)
        self.trend.getAxis("left").setTicks([[(float(v), f"{v} %") for v in range(0, 101, 20)]])
        self.trend.setLabel("bottom", "evaluation", color=INK)
        if not lines:
            self.note.setText("No trend: no evaluation of these arms in the history.")
        elif len(ticks) == 1:
            self.note.setText("One evaluation of these arms so far: the trend is one point.")
        return lines


def _short(name: str, limit: int = 40) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"
