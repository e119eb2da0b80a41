"""A lane setting's row in a model panel, as a user finds it: the widget beside its label."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from sandbox_app.ui.lane.backend_panel import BackendPanel

W = TypeVar("W", bound=QWidget)


def setting_row(panel: BackendPanel, name: str, label: str, kind: type[W]) -> W:
    """Setting ``name``'s widget in ``panel``, of ``kind``, with ``label`` beside it."""
    widget = panel.settings_form.widgets[name]
    assert isinstance(widget, kind)
    form = widget.parentWidget().findChild(QFormLayout)
    assert isinstance(form, QFormLayout)
    shown = form.labelForField(widget)
    assert isinstance(shown, QLabel)
    assert shown.text() == label
    return widget
