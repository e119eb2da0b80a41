"""The first screen shows the whole loop (issue 36, item 2): at 1280×720 and 1440×900 the Run
tab shows, without scrolling, the prompt editor, the tool toggles, the max-steps slider, the
model in use with a way to change it, and the trace; with DejaVu Sans and with Noto Sans, whose
lines are a fifth taller (tests/ui/desktop_fonts.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.desktop_fonts import NOTO, second_font, with_family
from tests.ui.test_screenshot import fully_shown

FONTS = ["DejaVu Sans", "Noto Sans"]


@pytest.fixture(params=FONTS)
def font_window(
    request: pytest.FixtureRequest, make_window: Callable[..., MainWindow]
) -> Iterator[MainWindow]:
    """A window built with the application's font set to a family at the same size (the
    window's widgets take it as they are made)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    family = second_font() if request.param == NOTO else request.param
    before = with_family(app, family)
    assert QFontInfo(app.font()).family() == family  # the font asked for, not a fallback
    try:
        yield make_window()
    finally:
        QApplication.setFont(before)


def the_loop(window: MainWindow) -> dict[str, QWidget]:
    tools = window.tool_panel
    return {
        "prompt editor": window.prompt_panel.template_edit,
        **{f"{name} toggle": box for name, box in tools.checkboxes.items()},
        "max steps": tools.max_steps_slider,
        "dialect": tools.dialect_combo,
        "model in use": window.column.bar.caption,
        "Settings": window.column.bar.settings_button,
        "trace": window.trace,
        "Run": window.run_button,
    }


@pytest.mark.parametrize("size", [(1280, 720), (1440, 900)])
def test_the_run_tab_shows_the_whole_loop_without_scrolling(
    qtbot: QtBot, font_window: MainWindow, size: tuple[int, int]
) -> None:
    window = font_window
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=2000)
    widgets = the_loop(window)
    assert len(widgets) >= 8  # the three built-in tools' toggles among them
    qtbot.waitUntil(lambda: all(fully_shown(w) for w in widgets.values()), timeout=2000)
    bar = window.editors.verticalScrollBar()
    assert bar.value() == 0
    assert bar.maximum() == 0 or not bar.isVisible()
    assert window.column.bar.caption.text() == "Scripted (offline) · scripted"
    # The template still shows a screenful of the default prompt (its nine lines and more).
    template = window.prompt_panel.template_edit
    assert template.viewport().height() >= 8 * template.fontMetrics().lineSpacing()


def test_settings_opens_the_model_panel_under_the_bar(qtbot: QtBot, window: MainWindow) -> None:
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=2000)
    panel, bar = window.backend_panel, window.column.bar
    assert not panel.isVisible()
    bar.settings_button.click()
    qtbot.waitUntil(lambda: fully_shown(panel.preset_combo), timeout=2000)
    assert fully_shown(panel.model_combo)
    assert fully_shown(bar.caption)  # pinned: the editors scroll under it
    assert panel.geometry().top() < window.prompt_panel.geometry().top()
    # Another backend and model, chosen in the panel: the bar says so.
    panel.select("custom", "http://localhost:8080/v1", "qwen3:8b")
    assert bar.caption.text() == "Custom URL · qwen3:8b"
    assert ">Custom URL (OpenAI-compatible server) · qwen3:8b<" in bar.caption.toolTip()
    bar.settings_button.click()
    qtbot.waitUntil(lambda: not panel.isVisible(), timeout=2000)
    assert bar.caption.text() == "Custom URL · qwen3:8b"
    assert window.current_scenario().model == panel.choice().settings
