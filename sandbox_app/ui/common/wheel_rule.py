"""The mouse wheel changes a value only where the user means it, app-wide.

Scrolling a panel passes its combo boxes, spin boxes and sliders under the pointer, and Qt
gives each the wheel: scrolling the left panel changed Max steps, the backend or the dialect (a
new prompt version) on its way down. So a wheel event over a QComboBox, QAbstractSpinBox or
QAbstractSlider without the keyboard focus is not theirs: it is ignored there, Qt offers it to
the parents, and the scroll area around them scrolls. A control the user clicked or tabbed into
(it has the focus) still takes the wheel. Nor does the wheel give them the focus: Qt's
WheelFocus, their default, would make the first notch focus the control and the next change
it; they take the focus by click and Tab only (StrongFocus).

Given once to the QApplication by ``app_rules.py`` (through ``app.app_wide_rules``, which the
tests' application gets too), so it holds for every widget, those made later included. Scroll
bars are sliders, but the wheel is what they are for: they keep it. The application-wide
filter sees every event (about 4,000 a second while four lanes stream); the window's lag with
it stayed within the run-to-run noise, and tests/perf/bench.py measures the window with it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollBar,
    QWidget,
)

_CONTROLS = (QComboBox, QAbstractSpinBox, QAbstractSlider)


def is_guarded(widget: QObject) -> bool:
    """A control whose value the wheel would change (a scroll bar only scrolls)."""
    return isinstance(widget, _CONTROLS) and not isinstance(widget, QScrollBar)


def not_theirs(watched: QObject) -> bool:
    """A wheel event over ``watched`` that its control must not take (the caller ignores
    it: Qt offers a wheel event nobody accepted to the parent, up to the scroll area)."""
    return is_guarded(watched) and isinstance(watched, QWidget) and not watched.hasFocus()


def no_wheel_focus(widget: QWidget) -> None:
    """A control that took the focus by wheel would take the next notch as its own."""
    if is_guarded(widget) and widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def existing_widgets() -> None:
    """Widgets made before the rule was installed follow it too."""
    for widget in QApplication.allWidgets():
        no_wheel_focus(widget)
