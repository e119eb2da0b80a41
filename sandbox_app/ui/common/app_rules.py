"""The application's own rules, for every widget, those made later too, in one event filter on
the QApplication: the mouse wheel changes only a focused control (wheel_rule.py), every
dialog and the window fit the screen they open on (screen_fit.py) and Tab leaves a multi-line
text box (tab_rule.py).

One filter, not one a rule: an application-wide filter is called from C++ for every event of
every object (thousands a second while lanes stream), and each Python filter is a crossing of
its own. Installed once however often asked (the app, the self-test and the tests' application
all ask)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow, QWidget

from sandbox_app.ui.common import screen_fit, tab_rule, wheel_rule


class AppRules(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Wheel:
            if wheel_rule.not_theirs(watched):
                event.ignore()
                return True
        elif kind == QEvent.Type.Polish and isinstance(watched, QWidget):
            wheel_rule.no_wheel_focus(watched)  # each widget is polished once, before it shows
        elif kind == QEvent.Type.Show and isinstance(watched, QDialog | QMainWindow):
            if watched.isWindow():  # the main window too: 800 px tall on a 720-px screen
                screen_fit.fit_to_screen(watched)
        elif kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return tab_rule.moves_on(watched, event)
        return False


def install(app: QApplication) -> None:
    if app.findChild(AppRules) is not None:
        return
    app.installEventFilter(AppRules(app))
    wheel_rule.existing_widgets()
