"""Render the window after finished runs to PNGs, as users will first see it.

Set REACT_SANDBOX_SCREENSHOTS to a folder (``docs``) to refresh the docs' pictures; run it
under Xvfb with QT_QPA_PLATFORM=xcb for a real window. Otherwise they go to a temporary folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.compare import Price
from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer
from tests.model_server.anthropic import fake_anthropic
from tests.model_server.gemini import gemini_server
from tests.model_server.local import LocalModel, fake_ollama_health
from tests.model_server.responses import responses_server
from tests.ui.test_window import fast

__all__ = [
    "fake_anthropic",
    "fake_ollama_health",
    "gemini_server",
    "responses_server",
]  # fixtures, for pytest

GUESSER = [  # a model that skips the search and guesses the price
    "Thought: Pro is probably about $15 per month, so 15 * 12 * 7.\n"
    "Action: calculator[15 * 12 * 7]",
    "Thought: The calculator gave the total.\nAnswer: $1,260 per year",
]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("REACT_SANDBOX_SCREENSHOTS") or tmp_path)


def save_and_check(window: MainWindow, path: Path, size: tuple[int, int] = (1280, 800)) -> None:
    window.trace.flush_all()
    assert window.grab().save(str(path))
    image = QImage(str(path))
    assert (image.width(), image.height()) == size
    # Not a blank picture: the traces' colours are in it.
    colours = {
        image.pixelColor(x, y).name()
        for x in range(size[0] // 2, size[0], 7)
        for y in range(80, size[1], 7)
    }
    assert len(colours) > 10


def test_screenshot_of_a_finished_run(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    window.resize(1280, 800)
    window.set_scenario(fast("failure_modes", tokens_per_second=0))
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.answer_label.isVisible(), timeout=15000)
    save_and_check(window, shots / "window.png")


def test_screenshot_of_a_comparison(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, shots: Path
) -> None:
    window.resize(1280, 800)
    fake_server.set_model("qwen2.5:1.5b", ModelScript(replies=replies_of("brightgrid")))
    fake_server.set_model("llama3.2:1b", ModelScript(replies=GUESSER))
    compare = window.compare
    compare.set_lanes(
        tuple(
            LaneConfig("Custom URL", fake_server.base_url, m)
            for m in ("qwen2.5:1.5b", "llama3.2:1b")
        )
    )
    compare.set_prices({"qwen2.5:1.5b": Price(0.10, 0.20)})
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(compare.lanes[1].record.runs) == 1, timeout=15000)
    qtbot.waitUntil(lambda: not compare.running, timeout=15000)
    assert [row["Correct"] for row in compare.rows()] == ["yes", "no"]
    save_and_check(window, shots / "compare.png")


def test_screenshot_of_a_thinking_model(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    window.resize(1280, 800)
    window.set_scenario(fast("thinking_model", tokens_per_second=150))  # thinking takes time
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.answer_label.isVisible(), timeout=15000)
    trace = window.trace
    trace.flush_all()
    qtbot.waitUntil(lambda: len(trace.thinking.regions) == 3)
    assert trace.toggle_thinking(trace.thinking.regions[0].header)  # step 1 unfolded, 2–3 not
    trace.scroll_to_step(1)
    save_and_check(window, shots / "thinking.png")


def test_screenshot_of_text_and_native_lanes(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, shots: Path
) -> None:
    from tests.core.test_native_tools import NATIVE_REPLIES

    window.resize(1280, 800)
    script = ModelScript(replies=replies_of("brightgrid"), native_replies=NATIVE_REPLIES)
    fake_server.set_model("qwen3:8b", script)
    compare = window.compare
    url = fake_server.base_url
    compare.set_lanes(
        (
            LaneConfig("custom", url, "qwen3:8b"),
            LaneConfig("custom", url, "qwen3:8b", settings=LaneSettings(tool_calling="native")),
        )
    )
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(compare.lanes[1].record.runs) == 1, timeout=15000)
    qtbot.waitUntil(lambda: not compare.running, timeout=15000)
    assert [row["Correct"] for row in compare.rows()] == ["yes", "yes"]
    save_and_check(window, shots / "native.png")


def test_screenshot_of_your_tools(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    from sandbox_app.core.tools.mock import CannedRule, MockToolSpec

    weather = MockToolSpec(
        "weather",
        "Today's weather for a city.",
        input_hint="city",
        rules=(
            CannedRule("paris", "18 °C, clear"),
            CannedRule("Oslo", "4 °C, rain", "exact"),
            CannedRule(r"^new\s+york", "25 °C, humid", "regex"),
        ),
        default="No forecast for that city.",
        latency_s=0.5,
    )
    window.set_scenario(window.current_scenario().with_changes(custom_tools=(weather,)))
    editor = window.tool_panel.edit_tools()
    qtbot.waitUntil(editor.isVisible, timeout=2000)
    assert editor.grab().save(str(shots / "tools.png"))
    assert QImage(str(shots / "tools.png")).width() >= 800
    editor.reject()


def test_screenshot_of_mcp_servers(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    import asyncio

    from tests.core.test_mcp import SERVER

    dialog = window.tool_panel.edit_servers()
    dialog.add_server()
    dialog.name_edit.setText("geo")
    dialog.where_edit.setText(f"python {SERVER.name}")
    dialog.env_edit.setPlainText("GEO_LANGUAGE=en")
    dialog.secrets_edit.setText("GEO_API_TOKEN")
    dialog.where_edit.setText(f"{sys.executable} {SERVER}")
    task = dialog.connect_current()
    assert task is not None
    qtbot.waitUntil(task.done, timeout=30000)
    assert dialog.status.text() == "connected: 7 tools"
    dialog.where_edit.setText(f"python {SERVER.name}")  # as a user would write it
    assert dialog.grab().save(str(shots / "mcp.png"))
    closing = asyncio.ensure_future(window.tool_panel.mcp.close_all())
    qtbot.waitUntil(closing.done, timeout=10000)


def presenter_laid_out(window: MainWindow) -> bool:
    """Presenter mode laid out again for its larger fonts (on the next turns of the event
    loop): a picture taken before shows a lane in its side-by-side width, small type."""
    answers = [lane.pane.answer_label for lane in window.compare.lanes]
    summary, menus, zoom = window.presenter.summary, window.menuBar(), window.presenter.zoom_label
    strip = window.compare.strip
    return (
        all(a.height() >= a.sizeHint().height() for a in answers if a.isVisible())
        and summary.height() >= summary.heightForWidth(summary.width())
        and menus.height() >= menus.sizeHint().height()
        and zoom.width() >= zoom.sizeHint().width()  # "· presenter ×1.5" not cut off
        and all(  # one lane at a time: the lane shown takes the strip's width
            lane.width() >= strip.area.viewport().width() - 2
            for lane in strip.lanes
            if strip.one_lane and lane.isVisible()
        )
    )


def test_screenshot_of_presenter_mode(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, shots: Path
) -> None:
    """Three lanes on a 1280x720 projector: one lane at a time, the table under it."""
    from sandbox_app.ui.common import theme
    from tests.ui.test_recordings import run_comparison

    window.resize(1280, 720)
    compare = run_comparison(qtbot, window, fake_server)
    window.presenter_action.trigger()
    try:
        for lane in compare.lanes:
            lane.settings_button.setChecked(False)  # the traces, not the settings
        # One lane at a time is shown, the others wait in their tabs.
        qtbot.waitUntil(lambda: presenter_laid_out(window))
        save_and_check(window, shots / "presenter.png", (1280, 720))
    finally:
        window.presenter_action.trigger()
        theme.high_contrast = False


def test_screenshot_of_a_test_set(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    from tests.ui.test_eval_panel import open_test_set

    window.resize(1280, 800)
    open_test_set(window)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    window.compare.results_tabs.parentWidget().setSizes([300, 420])  # type: ignore[attr-defined]
    save_and_check(window, shots / "testset.png")


def fully_shown(widget: QWidget) -> bool:
    """Every pixel of ``widget`` is on screen: nothing clipped by a parent or the window."""
    return widget.visibleRegion().boundingRect().size() == widget.size()


def test_at_800_by_600_the_editor_is_not_clipped(
    qtbot: QtBot, window: MainWindow, shots: Path
) -> None:
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.width() == 800, timeout=2000)
    window.column.bar.settings_button.click()  # the model's settings too
    left = window.editors
    qtbot.waitUntil(window.backend_panel.isVisible, timeout=2000)
    assert not left.horizontalScrollBar().isVisible()
    content = left.widget()
    assert content.width() <= left.viewport().width()
    for widget in (window.tool_panel.dialect_combo, window.backend_panel.preset_combo):
        assert widget.geometry().right() <= content.width(), widget
    assert fully_shown(window.run_button)
    assert window.grab().save(str(shots / "window-800x600.png"))


def test_at_1440_by_900_four_lanes_and_the_compare_toolbar_fit(
    qtbot: QtBot, window: MainWindow, shots: Path
) -> None:
    window.resize(1440, 900)
    qtbot.waitUntil(lambda: window.width() == 1440, timeout=2000)
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("Scripted (offline)") for _ in range(4)))
    window.tabs.setCurrentWidget(compare)
    shown: list[list[bool]] = []
    lanes = compare.lanes

    # Side by side, none cut at the sides. Their height may scroll: a lane with its settings
    # open keeps every row and the strip scrolls (lane_widget.py), as with a taller font
    # (Noto Sans's line spacing is a fifth more than DejaVu Sans's).
    def lanes_laid_out() -> bool:
        widths = [(lane.visibleRegion().boundingRect().width(), lane.width()) for lane in lanes]
        shown.append([seen == whole for seen, whole in widths])
        return all(shown[-1])

    try:  # layouts settle over a few event-loop turns
        qtbot.waitUntil(lanes_laid_out, timeout=2000)
    except qtbot.TimeoutError:
        widths = [
            (lane.width(), lane.visibleRegion().boundingRect().width()) for lane in compare.lanes
        ]
        raise AssertionError(f"lanes (width, shown): {widths}") from None
    for button in (compare.run_button, compare.prices_button, compare.export_button):
        assert fully_shown(button), button.text()
    assert window.grab().save(str(shots / "compare-1440x900.png"))


def test_screenshot_of_the_versions_panel(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE

    window.resize(1280, 800)
    window.set_scenario(fast("brightgrid", tokens_per_second=0))
    panel = window.prompt_panel
    for ending in ("Answer briefly.", "Search before you answer, then answer briefly in dollars."):
        panel.template_edit.setPlainText(DEFAULT_TEMPLATE + "\n" + ending)
        qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
        qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)
    versions = panel.versions
    panel.show_versions()
    first, second = window.workspace.model.scenario.prompt_history
    versions.select(first.id)
    versions.name_button.click()
    dialog = versions.name_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    from PySide6.QtWidgets import QLineEdit

    name = dialog.findChild(QLineEdit, "versionName")
    assert name is not None
    name.setText("brief")
    dialog.accept()
    versions.star_button.click()
    versions.select(first.id, second.id)
    versions.diff_button.click()
    assert versions.diff_view.marked("added")[-1].endswith("in dollars.")
    save_and_check(window, shots / "versions.png")


def test_screenshot_of_two_prompt_variants(qtbot: QtBot, window: MainWindow, shots: Path) -> None:
    window.resize(1280, 800)
    window.set_scenario(fast("prompt_variants", tokens_per_second=0))
    brief, grounded = window.workspace.model.scenario.prompt_history
    compare = window.compare
    assert [lane.config().settings.prompt for lane in compare.lanes] == ["brief", "grounded"]
    window.prompt_panel.show_versions()
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(compare.lanes[1].record.runs) == 1, timeout=15000)
    qtbot.waitUntil(lambda: not compare.running, timeout=15000)
    rows = compare.rows()
    named = [f"brief ({brief.short})", f"grounded ({grounded.short})"]  # names first
    assert [row["Prompt"] for row in rows] == named
    assert [row["Correct"] for row in rows] == ["no", "yes"]
    save_and_check(window, shots / "variants.png")


# Once in a CI run, a loopback socket of one of the four kinds' clients or test servers was
# left to the garbage collector when the servers stopped (a ResourceWarning at teardown, not a
# wrong picture); which one is still to be found: the warning is not an error here alone.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_screenshot_of_four_kinds_side_by_side(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    fake_server: ModelServer,
    fake_anthropic: ModelServer,
    responses_server: ModelServer,
    gemini_server: ModelServer,
    shots: Path,
) -> None:
    """Claude, the Responses API, Gemini and a local thinking model, each through its own
    SDK to its own test server: every lane shows its thinking and fills the table."""
    from tests.core.test_anthropic_kind import text_turns
    from tests.core.test_gemini import text_replies
    from tests.core.test_responses_kind import TEXT_REPLIES

    fake_anthropic.set_model("claude-sonnet-4-5", ModelScript(replies=text_turns()))
    responses_server.set_model("gpt-5-mini", TEXT_REPLIES)
    gemini_server.set_model("gemini-2.5-flash", text_replies())
    thinking = [f"<think>Step {i}: what does it need?</think>{r}" for i, r in
                enumerate(replies_of("brightgrid"), 1)]  # fmt: skip
    fake_server.set_model(
        "qwen3:8b", ModelScript(replies=thinking, reasoning_field="reasoning_content")
    )
    window = make_window()
    window.resize(1440, 900)
    compare = window.compare
    compare.set_lanes(
        (
            LaneConfig("anthropic", fake_anthropic.base_url, "claude-sonnet-4-5",
                       settings=LaneSettings(thinking_budget=2048)),
            LaneConfig("responses", responses_server.base_url, "gpt-5-mini",
                       settings=LaneSettings(reasoning_effort="medium")),
            LaneConfig("gemini", gemini_server.base_url, "gemini-2.5-flash"),
            LaneConfig("custom", fake_server.base_url, "qwen3:8b"),
        )
    )  # fmt: skip
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=5000)
    qtbot.waitUntil(lambda: not compare.running, timeout=30000)
    rows = compare.rows()
    assert [row["Correct"] for row in rows] == ["yes"] * 4, rows
    for lane in compare.lanes:  # the thinking is there, folded, in every lane
        lane.trace.flush_all()
        assert lane.trace.thinking.regions, lane.model_label.text()
        # A provider's own count (another tokenizer's) is never taken for a silent cut.
        assert "the server cut" not in lane.trace.plain_text(), lane.model_label.text()
    for row in rows:  # every kind reports or estimates its thinking tokens
        assert row["Thinking tokens"] not in ("—", "0"), row
    headers = [lane.model_label.text() for lane in compare.lanes]
    assert [h.split(" · ")[0] for h in headers] == [
        "Anthropic (Claude)",
        "OpenAI Responses API",
        "Google Gemini",
        "Custom URL (OpenAI-compatible server)",
    ]
    save_and_check(window, shots / "kinds.png", (1440, 900))


def test_screenshot_of_a_local_server_checked_and_metered(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    fake_ollama_health: ModelServer,
    shots: Path,
) -> None:
    """Ollama serving a 200-token context: the check says so and what to set, and the trace
    measures each step's prompt against it and names the step the server cut."""
    small = ModelScript(replies=replies_of("brightgrid"), context_length=200)
    fake_ollama_health.add(LocalModel("qwen3:8b", context=200), small)
    window = make_window()
    window.resize(1280, 800)
    panel = window.backend_panel
    with qtbot.waitSignal(panel.health_line.checked, timeout=10_000):
        panel.select("custom", fake_ollama_health.base_url, "qwen3:8b")
    assert any("200-token context" in line for line in panel.health_line.lines())
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)
    text = window.trace.plain_text()
    qtbot.waitUntil(lambda: " / 200 tokens (" in window.trace.plain_text(), timeout=5000)
    assert "the server cut the prompt to 200 tokens" in window.trace.plain_text(), text[:400]
    window.trace.scroll_to_step(1)
    save_and_check(window, shots / "local.png")


def test_screenshot_of_a_regression_comparison(
    qtbot: QtBot, window: MainWindow, shots: Path
) -> None:
    """Two evaluations a prompt version apart: Compare with… says the verdict and lists the
    cases that moved, k/N → k/N."""
    from tests.ui.test_history_view import run_test_set

    window.resize(1280, 800)
    run_test_set(qtbot, window, "brief")
    run_test_set(qtbot, window, "grounded")
    view = window.history.open_view()
    view.select(1, 2)
    qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    flips = view.flips
    assert flips is not None
    assert len(flips.rows()) == 2
    flips.resize(1000, 420)
    flips.table.selectRow(0)
    assert flips.grab().save(str(shots / "history.png"))
    assert QImage(str(shots / "history.png")).width() >= 900
    flips.close()
    view.close()


def test_screenshot_of_an_imported_trace_forked(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path, shots: Path
) -> None:
    """A trace an OpenInference-instrumented agent wrote, opened and forked from step 1 live."""
    from sandbox_app.ui.window.recordings import SPEEDS
    from tests import otel_traces

    window.resize(1280, 800)
    spans = otel_traces.run_agent(fake_server, "native", "openinference")
    fake_server.reset()
    path = otel_traces.write_json(spans, tmp_path / "agent.otlp.json")
    window.recordings.set_speed(dict(SPEEDS)["At once"])
    assert window.traces.open(path)
    pane = window.run_pane
    qtbot.waitUntil(lambda: (r := pane.shown_record()) is not None and r.done, timeout=10000)
    otel_traces.serve(fake_server)
    window.backend_panel.select("custom", fake_server.base_url, otel_traces.MODEL)
    assert pane.fork(1)
    qtbot.waitUntil(lambda: pane.running, timeout=2000)
    qtbot.waitUntil(lambda: not pane.running, timeout=20000)
    assert "── forked from Run 1 at step 1 ──" in pane.trace.plain_text()
    save_and_check(window, shots / "trace-fork.png")


def test_screenshot_of_the_results_matrix_and_its_chart(
    qtbot: QtBot, window: MainWindow, shots: Path
) -> None:
    """docs/matrix.png and docs/chart.png: the prompt-variants example's two versions, each on
    two lanes (5 and 2 steps), eight cases, 5 repeats, twice (the trend's two points)."""
    from dataclasses import replace

    from sandbox_app.ui.results.matrix_dialog import MatrixDialog
    from tests.ui.test_history_view import versions_scenario

    scenario = versions_scenario("brief")
    window.set_scenario(replace(scenario, test_set=scenario.test_set * 2))
    compare = window.compare
    compare.set_lanes(
        tuple(
            LaneConfig(settings=LaneSettings(prompt=version, max_steps=steps))
            for version in ("brief", "grounded")
            for steps in (5, 2)
        )
    )
    window.tabs.setCurrentWidget(compare)
    compare.results_tabs.setCurrentIndex(1)
    panel = compare.eval_panel
    for repeats in (1, 5):
        compare.repeat_spin.setValue(repeats)
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        runs = 8 * 4 * repeats
        qtbot.waitUntil(lambda n=runs: len(panel.results) == n and not panel.running, timeout=60000)
    qtbot.mouseClick(panel.matrix_button, Qt.MouseButton.LeftButton)
    dialog = next(w for w in window.findChildren(MatrixDialog) if w.isVisible())
    qtbot.waitUntil(lambda: dialog.rates is not None and dialog.model.rowCount() == 8, timeout=5000)
    dialog.resize(1400, 520)
    assert dialog.grab().save(str(shots / "matrix.png"))
    chart = dialog.show_chart()
    dialog.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: chart.bars is not None, timeout=5000)
    dialog.grab()  # the arms' names measured as drawn: the axis widens for them, then
    axis = chart.rates.getAxis("left")
    wide = dialog.fontMetrics().horizontalAdvance("brief · scripted")
    qtbot.waitUntil(lambda: axis.width() >= wide, timeout=5000)
    assert dialog.grab().save(str(shots / "chart.png"))
    for name in ("matrix.png", "chart.png"):
        assert QImage(str(shots / name)).size().width() == 1400
