"""Light and dark themes: every role stays readable, and the trace follows the system palette."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from pytestqt.qtbot import QtBot

from sandbox_app.ui.common import theme
from sandbox_app.ui.common.theme import (
    DARK,
    HIGH_CONTRAST_DARK,
    HIGH_CONTRAST_LIGHT,
    LIGHT,
    contrast,
    is_dark,
    styles_for,
)
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.trace_view import TraceView


def dark_palette() -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#e8eaed"))
    palette.setColor(QPalette.ColorRole.Window, QColor("#2b2b2b"))
    return palette


def light_palette() -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#000000"))
    return palette


@pytest.mark.parametrize(("palette", "styles"), [(light_palette(), LIGHT), (dark_palette(), DARK)])
def test_every_role_is_readable_on_its_theme(palette: QPalette, styles: dict[str, object]) -> None:
    assert styles_for(palette) is styles
    for key, style in styles_for(palette).items():
        background = (
            QColor(style.background) if style.background else palette.color(QPalette.ColorRole.Base)
        )
        needed = 3.0 if key == "dropped" else 4.5  # struck-through text is dim on purpose
        assert contrast(QColor(style.color), background) >= needed, key


@pytest.mark.parametrize(
    ("palette", "styles"),
    [(light_palette(), HIGH_CONTRAST_LIGHT), (dark_palette(), HIGH_CONTRAST_DARK)],
)
def test_presenter_colours_are_7_to_1_on_their_theme(
    palette: QPalette, styles: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(theme, "high_contrast", True)
    assert styles_for(palette) is styles
    for key, style in styles_for(palette).items():
        background = (
            QColor(style.background) if style.background else palette.color(QPalette.ColorRole.Base)
        )
        assert contrast(QColor(style.color), background) >= 7.0, key


def test_trace_switches_colours_when_the_system_goes_dark(qtbot: QtBot) -> None:
    view = TraceView()
    qtbot.addWidget(view)
    view.setPalette(light_palette())
    view.append_text(Role.MODEL, "Thought: check the price\n")
    view.flush_all()
    first = view.document().firstBlock()
    assert first.layout().formats()[0].format.foreground().color().name() == LIGHT["thought"].color
    view.setPalette(dark_palette())
    assert is_dark(view.palette())
    first = view.document().firstBlock()
    assert first.layout().formats()[0].format.foreground().color().name() == DARK["thought"].color


@pytest.mark.parametrize("high_contrast", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("palette", [light_palette(), dark_palette()], ids=["light", "dark"])
def test_the_grid_s_pass_shades_are_graded_and_readable_in_every_theme(
    palette: QPalette, high_contrast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(theme, "high_contrast", high_contrast)
    shades = [theme.pass_shade(passed / 5, palette) for passed in range(6)]
    greenness = [shade.greenF() - shade.redF() for shade in shades]
    assert greenness == sorted(greenness)  # monotone from 0/5 to 5/5
    assert len({shade.name() for shade in shades}) == 6
    assert shades[4].name() != shades[0].name()
    needed = 7.0 if high_contrast else 4.5
    text = palette.color(QPalette.ColorRole.Text)
    assert all(contrast(shade, text) >= needed for shade in shades)
