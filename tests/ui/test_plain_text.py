"""Text from a file, a model, a tool or a server is shown as plain text in every widget
(ui/common/plain.py): after opening a hostile scenario and running a hostile tool, every label that
shows it is PlainText and every tooltip shows it as written. And the ui package has no way
around the rule: no bare QLabel or QMessageBox, no rich text but app-written literals, no
tooltip that is not a literal or escaped by ``tip``."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

import sandbox_app.ui
from sandbox_app.ui.common.plain import tip
from sandbox_app.ui.tools.approval import ApprovalDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelScript, ModelServer
from tests.ui.test_window import use_server

MARK = "evil.invalid"
HOSTILE = (
    "<h1>Big</h1><a href='https://evil.invalid/x'>click here</a>"
    "<img src='/usr/share/pixmaps/evil.invalid.png'>"
)


def labels_showing(mark: str) -> Iterator[QLabel]:
    for widget in QApplication.allWidgets():
        if isinstance(widget, QLabel) and mark in widget.text():
            yield widget


def assert_plain_everywhere(least: int) -> None:
    """Every label showing the hostile text shows it as text; there are at least ``least``."""
    showing = list(labels_showing(MARK))
    assert len(showing) >= least
    rich = [
        (w.objectName(), w.text()) for w in showing if w.textFormat() != Qt.TextFormat.PlainText
    ]
    assert rich == []
    assert not [w for w in showing if w.openExternalLinks()]


def shown_tooltip(widget: QWidget) -> str:
    """The tooltip as Qt renders it (Qt guesses: markup when it looks like markup)."""
    text = widget.toolTip()
    if not GuiQt.mightBeRichText(text):
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def test_a_hostile_scenario_files_error_is_shown_as_text(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"version": HOSTILE, "title": "x"}), encoding="utf-8")
    assert not window.files.open_scenario(path)
    dialog = window.files.error_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    assert HOSTILE in dialog.text()  # the user sees what the file says, as it says it
    assert_plain_everywhere(least=1)
    dialog.close()


class HostileTool:
    """A tool with side effects whose description is markup."""

    name = "post"
    description = HOSTILE + "\nSecond line"
    input_hint = "text"
    read_only = False
    max_input = 2000

    async def run(self, input: str) -> str:
        return input


def test_a_hostile_tool_its_input_and_the_models_answer_are_shown_as_text(
    qtbot: QtBot, make_window: Callable[..., MainWindow], fake_server: ModelServer
) -> None:
    window = make_window()
    # A tool source, as a connected MCP server's tools are offered (ui/tools/mcp_servers.py).
    window.workspace.model.set_sources([HostileTool()])
    box = window.tool_panel.checkboxes["post"]
    assert shown_tooltip(box) == HostileTool.description
    box.setChecked(True)
    fake_server.set_model(
        "m", ModelScript(replies=[f"Action: post[{HOSTILE}]", f"Answer: {HOSTILE}"])
    )
    use_server(window, fake_server, "m")
    window.start_run()
    qtbot.waitUntil(lambda: bool(window.findChildren(ApprovalDialog)), timeout=5000)
    dialog = window.findChildren(ApprovalDialog)[0]
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    assert dialog.informativeText() == f"Exact input:\n{HOSTILE}"
    assert_plain_everywhere(least=1)  # the informative label holds the input
    qtbot.mouseClick(dialog.decline_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=10000)
    assert window.run_pane.answer_label.text() == HOSTILE
    assert_plain_everywhere(least=1)


def test_a_tooltip_shows_its_text_as_written() -> None:
    for text in (HOSTILE, "a < b & c > d", "line 1\nline 2", "&lt;b&gt;"):
        document = QTextDocument()
        document.setHtml(tip(text))
        assert document.toPlainText() == text


# ---- the ui package has no way around the rule ------------------------------------------

UI = Path(sandbox_app.ui.__file__).parent
# App-written markup, every word of it: the About box and the shortcuts table.
STATIC_ALLOWED = {("about.py", "about")}
STATIC = {"about", "critical", "information", "question", "warning", "aboutQt"}


def _app_written(node: ast.expr) -> bool:
    """A literal, a CONSTANT, or an f-string of literals and CONSTANTs."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.FormattedValue):
        return _app_written(node.value)
    if isinstance(node, ast.JoinedStr):
        return all(_app_written(part) for part in node.values)
    return False


def _problems(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        where = f"{path.name}:{node.lineno}"
        func = node.func
        name = func.id if isinstance(func, ast.Name) else ""
        attr = func.attr if isinstance(func, ast.Attribute) else ""
        owner = (
            func.value.id
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            else ""
        )
        if name in ("QLabel", "QMessageBox"):
            found.append(f"{where}: {name}(…) (use plain_label / message_box)")
        if owner == "QMessageBox" and attr in STATIC and (path.name, attr) not in STATIC_ALLOWED:
            found.append(f"{where}: QMessageBox.{attr}(…) shows rich text")
        if owner == "QToolTip" or attr in ("setHtml", "insertHtml", "appendHtml", "setMarkdown"):
            found.append(f"{where}: {attr}(…) reads markup")
        if attr == "setInformativeText":
            found.append(f"{where}: setInformativeText (use plain.set_informative)")
        if attr == "setTextFormat" and "PlainText" not in ast.unparse(node):
            found.append(f"{where}: setTextFormat other than PlainText")
        if name == "rich_label" and not (node.args and isinstance(node.args[0], ast.Constant)):
            found.append(f"{where}: rich_label of text that is not a literal")
        if attr == "setToolTip" and node.args:
            arg = node.args[0]
            literal = _app_written(arg)
            escaped = isinstance(arg, ast.Call) and getattr(arg.func, "id", "") == "tip"
            if not (literal or escaped):
                found.append(f"{where}: setToolTip({ast.unparse(arg)}) (use tip(…))")
    return found


def test_the_ui_package_shows_outside_text_only_through_the_rule() -> None:
    files = [p for p in sorted(UI.rglob("*.py")) if p.name != "plain.py"]
    assert len(files) > 20
    assert [problem for path in files for problem in _problems(path)] == []


def test_the_check_finds_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "QLabel(text)\nQMessageBox.warning(w, 't', text)\nbox.setToolTip(name)\n"
        "rich_label(f'<b>{name}</b>')\nlabel.setTextFormat(Qt.TextFormat.RichText)\n"
        "box.setInformativeText(text)\nview.setHtml(text)\n",
        encoding="utf-8",
    )
    assert len(_problems(bad)) == 7
