"""Template variables in the window: the prompt panel's Variables box and Rendered tab, the run
pane refusing an undefined one, and each test case's own values reaching the test server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import EvalCase, Expected, LaneConfig, Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.ui.compare.test_set_editor import ANSWER, TestSetEditor
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelScript, ModelServer

TEMPLATE = "You answer for {{company}}.\n{tools}\n{format}"


def test_the_variables_box_fills_the_rendered_prompt_and_flags_an_undefined_one(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.set_scenario(Scenario(system_prompt=TEMPLATE, question="Price of {{product}}?"))
    panel = window.prompt_panel
    rendered = panel.rendered_view
    # Nothing defined yet: shown as written, and both named under the rendered prompt.
    assert rendered.toPlainText().startswith("You answer for {{company}}.\n")
    assert panel.prompt_error.isVisibleTo(panel)
    assert panel.prompt_error.text() == (
        "⚠ Undefined variables {{company}}, {{product}} in the system prompt and the question: "
        "give them a value in the scenario's variables."
    )
    panel.variables_edit.setPlainText("company = Brightgrid\nproduct = Pro")
    assert rendered.toPlainText().startswith("You answer for Brightgrid.\n")
    assert not panel.prompt_error.isVisibleTo(panel)
    assert window.workspace.model.scenario.variables == {"company": "Brightgrid", "product": "Pro"}
    # A bad line is said in one line and changes nothing.
    panel.variables_edit.setPlainText("company = Brightgrid\n2nd = x")
    assert panel.variables_error.isVisibleTo(panel)
    assert panel.variables_error.text().startswith("⚠ Variables, line 2: '2nd' is not a variable")
    assert window.workspace.model.scenario.variables == {"company": "Brightgrid", "product": "Pro"}
    panel.variables_edit.setPlainText("company = Bright\\ngrid\nproduct = Pro")
    assert not panel.variables_error.isVisibleTo(panel)
    assert window.files.save_to(tmp_path / "s.json")
    saved = load_scenario(tmp_path / "s.json")
    assert saved.variables == {"company": "Bright\ngrid", "product": "Pro"}
    window.set_scenario(saved)  # opened again: the box shows them as they were written
    assert panel.variables_edit.toPlainText() == "company = Bright\\ngrid\nproduct = Pro"


class _Paints(QObject):
    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        self.count += event.type() == QEvent.Type.Paint
        return False


def drawn(widget: QWidget) -> Callable[[], bool]:
    """True once ``widget`` is painted from now on: the layouts around it are settled then."""
    paints = _Paints(widget)
    return lambda: paints.count > 0


def test_a_warning_as_you_type_moves_no_box(qtbot: QtBot, window: MainWindow) -> None:
    window.set_scenario(Scenario(system_prompt="You answer.\n{tools}\n{format}"))
    panel = window.prompt_panel
    qtbot.waitExposed(window)
    below = (panel.question_edit, panel.variables_edit, window.tool_panel)

    def where() -> list[int]:
        return [box.mapTo(window, QPoint(0, 0)).y() for box in below]

    before = where()
    warned = drawn(panel.prompt_error)
    qtbot.keyClicks(panel.template_edit, "For {{company}}: ")
    qtbot.waitUntil(warned, timeout=5000)
    assert panel.prompt_error.text().startswith("⚠ Undefined variable {{company}}")
    assert where() == before  # Question, Variables and the tools stayed where they were
    # A bad variables line, said beside its heading, moves nothing either.
    warned = drawn(panel.variables_error)
    qtbot.keyClicks(panel.variables_edit, "2nd = x")
    qtbot.waitUntil(warned, timeout=5000)
    assert panel.variables_error.text().startswith("⚠ Variables, line 1")
    assert where() == before


def test_a_run_with_an_undefined_variable_is_refused_in_the_run_pane(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: 20"]))
    scenario = Scenario(question="Price of {{product}}?", variables={"company": "Brightgrid"})
    window.set_scenario(scenario)
    window.backend_panel.select("custom", fake_server.base_url, "m")
    window.start_run()
    status = window.run_pane.header.status
    qtbot.waitUntil(lambda: status.isVisibleTo(window.run_pane), timeout=10000)
    assert "Undefined variable {{product}} in the question" in status.text()
    assert fake_server.requests == []
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=10000)  # then Run again
    # Defined in the box, the same run goes out with it filled.
    window.prompt_panel.variables_edit.setPlainText("product = Pro")
    window.start_run()
    qtbot.waitUntil(lambda: len(fake_server.requests) == 1, timeout=10000)
    assert fake_server.requests[-1]["messages"][1]["content"] == "Price of Pro?"


def test_the_windows_test_set_sends_each_cases_variables(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    by_question = {"Capital of France?": ["Answer: Paris"], "Capital of Japan?": ["Answer: Tokyo"]}
    fake_server.set_model("m", ModelScript(replies=["Answer: ?"], by_question=by_question))
    cases = (
        EvalCase("Capital of {{country}}?", Expected("Paris"), variables={"country": "France"}),
        EvalCase(
            "Capital of {{country}}?",
            Expected("Tokyo"),
            variables={"country": "Japan", "company": "Tokyo Inc"},
        ),
    )
    scenario = Scenario(system_prompt=TEMPLATE, variables={"company": "Brightgrid"}, test_set=cases)
    window.set_scenario(scenario)
    compare = window.compare
    url = fake_server.base_url
    compare.set_lanes((LaneConfig("custom", url, "m"), LaneConfig("custom", url, "m")))
    window.tabs.setCurrentWidget(compare)
    compare.results_tabs.setCurrentIndex(1)  # Test set
    panel = compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 4 and not panel.running, timeout=20000)
    sent = {
        (r["messages"][1]["content"], r["messages"][0]["content"].splitlines()[0])
        for r in fake_server.requests
    }
    assert sent == {
        ("Capital of France?", "You answer for Brightgrid."),
        ("Capital of Japan?", "You answer for Tokyo Inc."),  # the case's own wins
    }
    assert panel.grid_model.failed_runs() == 0
    grid = panel.grid
    questions = [grid.item(row, 0).text() for row in range(grid.rowCount())]  # type: ignore[union-attr]
    assert questions == ["Capital of France?", "Capital of Japan?"]  # as asked, apart


def test_editing_a_case_in_the_table_keeps_its_variables(qtbot: QtBot) -> None:
    case = EvalCase("Capital of {{country}}?", Expected("Paris"), variables={"country": "France"})
    editor = TestSetEditor((case,))
    qtbot.addWidget(editor)
    answer = editor.table.item(0, ANSWER)
    assert answer is not None
    answer.setText("paris")
    editor.accept()
    (edited,) = editor.cases()
    assert (edited.expected.answer, edited.variables) == ("paris", {"country": "France"})
