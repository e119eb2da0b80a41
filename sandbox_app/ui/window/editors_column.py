"""The window's left side: the model in use, always in view, above the editors.

At 1280×720 the Run tab shows the whole loop without scrolling: what the model is told (the
prompt editor), what it may use and for how long (the tools, max steps), which model, and what
it did (the trace, on the right). The model is one line pinned above the editors' scroll area:
"Model  backend · model  [Settings]", as a compare lane's header is (its Settings button
opens its form), and as the Anthropic Console's workbench, OpenAI's playground and LM Studio
put the model in view with its parameters one click behind it. Settings opens the whole model
panel (URL, key, model list, sampling) under the bar, at the top of the editors, which scroll
while it is open; closed, the editors fit.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QScrollArea, QToolButton, QVBoxLayout, QWidget

from sandbox_app.ui.common.notice_line import NoticeLine
from sandbox_app.ui.common.plain import rich_label, tip
from sandbox_app.ui.lane.backend_panel import BackendPanel, kind_caption

SETTINGS_TIP = "Show or hide the model's settings: backend, URL, key, model list, sampling"


class ModelBar(QWidget):
    """Backend · model on one line (cut with … when narrow, the kind's name too in its
    tooltip) and the Settings toggle; redrawn whenever the panel changes."""

    def __init__(self, panel: BackendPanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.caption = NoticeLine()
        self.caption.setObjectName("modelCaption")
        self.settings_button = QToolButton()
        self.settings_button.setText("Settings")
        self.settings_button.setCheckable(True)
        self.settings_button.setToolTip(SETTINGS_TIP)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(rich_label("<b>Model</b>"))
        layout.addWidget(self.caption, 1)
        layout.addWidget(self.settings_button)
        panel.changed.connect(self.show_choice)
        self.show_choice()

    def show_choice(self) -> None:
        """The backend's short name and the model ("Custom URL · qwen3:8b": the model is
        what a narrow bar must not cut); the kind's name too in the tooltip."""
        config = self.panel.choice().config
        model = config.model or "no model chosen"
        self.caption.say(f"{config.kind.choice(config.backend).name} · {model}")
        self.caption.setToolTip(tip(f"{kind_caption(config)} · {model}"))


class EditorsColumn(QWidget):
    """The model bar, then a scroll area holding the model panel (closed at first), the
    prompt panel and the tool panel. Presenter mode hides the whole column."""

    def __init__(
        self, backend_panel: BackendPanel, prompt_panel: QWidget, tool_panel: QWidget
    ) -> None:
        super().__init__()
        self.backend_panel = backend_panel
        backend_panel.heading.hide()  # the bar above says "Model"
        self.bar = ModelBar(backend_panel)
        content = QWidget()
        inner = QVBoxLayout(content)
        inner.addWidget(backend_panel)
        inner.addWidget(prompt_panel, 1)
        inner.addWidget(tool_panel)
        self.area = QScrollArea()
        self.area.setWidget(content)
        self.area.setWidgetResizable(True)
        # Never narrower than its contents: a small window squeezes the trace, which wraps,
        # instead of clipping the editor behind a horizontal scrollbar.
        self.area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        widest = max(w.minimumSizeHint().width() for w in (backend_panel, prompt_panel, tool_panel))
        margins = inner.contentsMargins()
        self.area.setMinimumWidth(
            widest
            + margins.left()
            + margins.right()
            + self.area.verticalScrollBar().sizeHint().width()
            + 2 * self.area.frameWidth()
        )
        backend_panel.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        bar_row = QVBoxLayout()
        bar_row.setContentsMargins(margins.left(), 4, margins.right(), 0)
        bar_row.addWidget(self.bar)
        layout.addLayout(bar_row)
        layout.addWidget(self.area, 1)
        self.bar.settings_button.toggled.connect(self._on_settings_toggled)

    def _on_settings_toggled(self, on: bool) -> None:
        self.backend_panel.setVisible(on)
        if on:  # opened under the bar: brought into view once laid out
            QTimer.singleShot(0, self, lambda: self.area.verticalScrollBar().setValue(0))
