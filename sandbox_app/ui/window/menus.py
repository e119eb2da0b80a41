"""The window's menus: File, Edit, View and Help, each action wired to the part that does it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtGui import QAction, QActionGroup, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QDialogButtonBox,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.running.recording import recordings_dir
from sandbox_app.core.scenarios.scenario_file import builtin_scenarios
from sandbox_app.ui.common.splitters import restore_collapsed
from sandbox_app.ui.window.recordings import SPEEDS
from sandbox_app.ui.window.run_tabs import RunTab

if TYPE_CHECKING:
    from sandbox_app.ui.history.history_actions import HistoryActions
    from sandbox_app.ui.telemetry.otel_out import OtelOut
    from sandbox_app.ui.window.file_actions import FileActions
    from sandbox_app.ui.window.presenter import Presenter
    from sandbox_app.ui.window.recordings import RecordingActions
    from sandbox_app.ui.window.run_tabs import RunTabs
    from sandbox_app.ui.window.trace_opening import TraceActions

Keys = QKeySequence | QKeySequence.StandardKey | str | list[QKeySequence]


class MenuTargets(RunTab, Protocol):
    """What the menus act on (MainWindow is one): the helpers that do each menu's work, the
    runs on screen, and the window's one command of its own, Copy trace."""

    @property
    def files(self) -> FileActions: ...

    @property
    def recordings(self) -> RecordingActions: ...

    @property
    def traces(self) -> TraceActions: ...

    @property
    def presenter(self) -> Presenter: ...

    @property
    def run_tabs(self) -> RunTabs: ...

    @property
    def history(self) -> HistoryActions: ...

    @property
    def otel(self) -> OtelOut: ...

    def copy_trace(self) -> None: ...

    def undo_edit(self) -> None: ...

    def redo_edit(self) -> None: ...


def build_menus(window: QMainWindow, does: MenuTargets) -> tuple[QAction, QAction]:
    """Every menu of ``window``, each entry wired to the part of ``does`` that does it;
    returns View's Show thinking and Presenter mode actions."""
    files, recordings, presenter, tabs = does.files, does.recordings, does.presenter, does.run_tabs
    file_menu = window.menuBar().addMenu("&File")
    add(window, file_menu, "&New", QKeySequence.StandardKey.New, files.new_scenario)
    add(window, file_menu, "&Open…", QKeySequence.StandardKey.Open, files.open_dialog)
    examples = file_menu.addMenu("Open &example")
    for path in builtin_scenarios():
        action = examples.addAction(path.stem.replace("_", " ").capitalize())
        action.triggered.connect(lambda _=False, p=path: files.ask_to_open(p))
    file_menu.addMenu(files.recent_menu)
    file_menu.addSeparator()
    add(window, file_menu, "&Save", QKeySequence.StandardKey.Save, files.save)
    add(window, file_menu, "Save &as…", QKeySequence.StandardKey.SaveAs, files.save_as)
    file_menu.addSeparator()
    add(window, file_menu, "Open &recording…", "Ctrl+Shift+O", recordings.open_dialog)
    shipped = file_menu.addMenu("Play an example recordin&g")
    for path in sorted(recordings_dir().glob("*.json")):
        action = shipped.addAction(path.stem.replace("_", " ").capitalize())
        action.triggered.connect(lambda _=False, p=path: recordings.play(p))
    # Not Ctrl+Shift+S: that is Save as…, and two actions on one key do neither (nor
    # Ctrl+Alt+S: AltGr+S types a letter on some layouts).
    add(window, file_menu, "Save re&cording…", "Ctrl+Shift+R", recordings.save_dialog)
    add(window, file_menu, "Open &trace…", "", does.traces.open_dialog)
    add(window, file_menu, "&Export run…", "Ctrl+E", lambda: _export_run(does))
    otel = file_menu.addMenu("Export as Open&Telemetry")  # Phoenix, Langfuse, any OTLP endpoint
    for subject, label in (
        ("run", "&Run…"),
        ("comparison", "&Comparison…"),
        ("test set", "&Test set results…"),
    ):
        otel.addAction(label).triggered.connect(lambda _=False, s=subject: _export_otel(does, s))
    file_menu.addSeparator()
    add(window, file_menu, "&Quit", QKeySequence.StandardKey.Quit, window.close)
    edit_menu = window.menuBar().addMenu("&Edit")
    # The prompt template's edits, a restored version among them (a text field with the
    # focus takes these keys for its own undo first).
    add(window, edit_menu, "&Undo", QKeySequence.StandardKey.Undo, does.undo_edit)
    add(window, edit_menu, "&Redo", QKeySequence.StandardKey.Redo, does.redo_edit)
    edit_menu.addSeparator()
    add(window, edit_menu, "&Copy trace", "Ctrl+Shift+C", does.copy_trace)
    find = add(
        window, edit_menu, "&Find in trace…", QKeySequence.StandardKey.Find, tabs.find_in_trace
    )
    step_k = add(window, edit_menu, "&Go to step…", "Ctrl+G", tabs.go_to_step)
    window.addActions([find, step_k])  # their keys work while a run disables the menu bar

    view = window.menuBar().addMenu("&View")
    show_thinking = view.addAction("Show &thinking")
    show_thinking.setCheckable(True)
    show_thinking.toggled.connect(tabs.set_show_thinking)
    presenting = add(window, view, "&Presenter mode", "F11", lambda: None)
    presenting.setCheckable(True)
    presenting.toggled.connect(presenter.set_on)
    view.addSeparator()
    # Ctrl++ is Ctrl+Shift+= on US layouts: Ctrl+= too, on the same action (a hidden
    # action's shortcut never fires).
    zoom_in = [*QKeySequence.keyBindings(QKeySequence.StandardKey.ZoomIn), QKeySequence("Ctrl+=")]
    add(window, view, "Zoom &in", zoom_in, presenter.zoom_in)
    add(window, view, "Zoom &out", QKeySequence.StandardKey.ZoomOut, presenter.zoom_out)
    add(window, view, "&Actual size", "Ctrl+0", presenter.zoom_reset)
    one_lane = view.addAction("&One lane at a time (Compare)")
    one_lane.setCheckable(True)
    one_lane.setToolTip("Each lane full width, chosen by its tab, above the comparison table")
    one_lane.toggled.connect(tabs.set_one_lane)
    presenter.one_lane_action = one_lane
    # A panel dragged shut (the comparison's table, the editors): each one given room again.
    add(window, view, "&Restore collapsed panels", "", lambda: restore_collapsed(window))
    view.addSeparator()
    add(window, view, "&History…", "Ctrl+Shift+H", does.history.open_view)
    pace = view.addMenu("&Pace (recordings, offline model)")
    group = QActionGroup(window)
    for label, speed in SPEEDS:
        action = pace.addAction(label)
        action.setCheckable(True)
        action.setChecked(speed == recordings.speed)
        action.triggered.connect(lambda _=False, s=speed: recordings.set_speed(s))
        group.addAction(action)

    # Keys on buttons and the trace say what they do, for Help → Keyboard shortcuts (the Run
    # and Stop buttons' say so where the window makes them).
    step = QShortcut(QKeySequence("F10"), window, tabs.run_pane.stepper.step)
    step.setWhatsThis("Step through a run (Run tab)")

    help_menu = window.menuBar().addMenu("&Help")
    help_menu.addAction("&Keyboard shortcuts").triggered.connect(lambda: show_shortcuts(window))
    help_menu.addAction("&About ReAct Sandbox").triggered.connect(lambda: _about(window))
    return show_thinking, presenting


# The dialogs behind these two are imported when first asked for, not before the window's
# first frame (the export formats, and the version from the installed metadata).
def _export_run(tab: RunTab) -> None:
    from sandbox_app.ui.window.run_exports import export_run_dialog

    export_run_dialog(tab)


def _export_otel(does: MenuTargets, subject: str) -> None:
    from sandbox_app.ui.telemetry.otel_dialog import open_otel_dialog

    open_otel_dialog(does, does, subject)


def _about(window: QWidget) -> None:
    from sandbox_app.ui.window.about import show_about

    show_about(window)


def add(window: QWidget, menu: QMenu, text: str, keys: Keys, slot: Callable[[], object]) -> QAction:
    action = QAction(text, window)
    if isinstance(keys, list):
        action.setShortcuts(keys)
    else:
        action.setShortcut(QKeySequence(keys) if isinstance(keys, str) else keys)
    action.triggered.connect(slot)
    menu.addAction(action)
    return action


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """Every key the window answers to and what it does, read from the window itself: each
    menu action with a shortcut (its menu and name), each button and QShortcut that says what
    it does in its whatsThis. Nothing to keep in step by hand."""
    rows: list[tuple[str, str]] = []
    for button in window.findChildren(QAbstractButton):
        if not button.shortcut().isEmpty() and button.whatsThis():
            rows.append((_keys([button.shortcut()]), button.whatsThis()))
    for shortcut in window.findChildren(QShortcut):
        if shortcut.keys() and shortcut.whatsThis():
            rows.append((_keys(shortcut.keys()), shortcut.whatsThis()))
    for action in window.findChildren(QAction):
        if action.shortcuts() and action.isVisible():
            menus = [m for m in action.associatedObjects() if isinstance(m, QMenu)]
            where = f"{_clean(menus[0].title())} → " if menus else ""
            rows.append((_keys(action.shortcuts()), where + _clean(action.text())))
    return list(dict.fromkeys(rows))  # a lane's Space is the Run tab's Space: once


def _keys(sequences: list[QKeySequence]) -> str:
    # "Return" is the key's name; people call it Enter.
    names = (k.toString(QKeySequence.SequenceFormat.NativeText) for k in sequences)
    return " or ".join(n.replace("Return", "Enter") for n in names)


def _clean(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…")


def show_shortcuts(window: QWidget) -> QDialog:
    """Help → Keyboard shortcuts: a table of every key (ui/common/screen_fit.py keeps it on
    a 720-px screen: the table scrolls, Close stays in view)."""
    rows = shortcut_rows(window)
    dialog = QDialog(window)
    dialog.setWindowTitle("Keyboard shortcuts")
    table = QTableWidget(len(rows), 2)
    table.setObjectName("shortcuts")
    table.setHorizontalHeaderLabels(["Keys", "What it does"])
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    bold = QFont(table.font())
    bold.setBold(True)
    for row, (keys, what) in enumerate(rows):
        key_item = QTableWidgetItem(keys)
        key_item.setFont(bold)
        table.setItem(row, 0, key_item)
        table.setItem(row, 1, QTableWidgetItem(what))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    close.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table, 1)
    layout.addWidget(close)
    # Every row if the screen has room for them; the screen's height at most (screen_fit).
    header = table.horizontalHeader().sizeHint().height()
    height = header + table.verticalHeader().length() + 2 * table.frameWidth() + 60
    width = table.horizontalHeader().length() + 2 * table.frameWidth() + 40
    dialog.resize(max(width, 420), height)
    dialog.open()
    return dialog
