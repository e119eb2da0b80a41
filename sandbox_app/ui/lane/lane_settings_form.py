"""The model panel's rows for the lane settings, built from core/scenarios/lane_settings.py's
registry:
a new setting with a label gets its row here without touching the panel.

A number is a spin box, a whole number one too (None shown as the setting's ``none_text`` at
the bottom of the range: "Auto"), a choice a combo box (None as its first item), a switch a
check box, a text an editable combo box (None as its first item; the choices it offers are
given by :meth:`LaneSettingsForm.offer`: a lane's prompt versions, from the scenario's
history), a list of names a line edit ("none" for none). A setting
without a label has no row, nor has a lane-only one outside a compare lane; its value is the
one last shown, so a lane keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QWidget,
)

from sandbox_app.core.scenarios.lane_settings import SETTINGS, LaneSettings, Setting, SettingError
from sandbox_app.ui.common.plain import tip

# The spin boxes' widest range: a setting's own may be wider (a seed's is 64-bit), Qt's not.
_QT_INT = (-(2**31), 2**31 - 1)


class LaneSettingsForm(QObject):
    """Signals:
    changed(): a setting was edited, or :meth:`show` set them all (once).
    """

    changed = Signal()

    def __init__(self, form: QFormLayout, parent: QWidget, lane: bool = False) -> None:
        """``lane``: a compare lane's form, with the lane-only rows (prompt, dialect…)."""
        super().__init__(parent)
        self._shown = LaneSettings()
        self._written: dict[str, Any] = {}  # what show() put in each widget, as it reads
        self.widgets: dict[str, QWidget] = {}
        self._form = form
        # A lane's own prompt, dialect, tools and steps fold under one "Prompt & limits" row:
        # four lanes must keep their traces in view at 1440×900 (tests/ui/test_screenshot).
        self.more_button = QToolButton()
        self.more_button.setText("Prompt && limits")  # &&: a literal &, not a mnemonic
        self.more_button.setCheckable(True)
        self.more_button.setArrowType(Qt.ArrowType.RightArrow)
        self.more_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.more_button.toggled.connect(self._unfold)
        # The lane-only ones last, under their fold (a kind's own are registered after them).
        for setting in sorted(SETTINGS.values(), key=lambda s: s.lane_only):
            if setting.label and (lane or not setting.lane_only):
                if setting.lane_only and not any(SETTINGS[n].lane_only for n in self.widgets):
                    form.addRow("", self.more_button)
                widget = _widget_for(setting, lambda *_: self.changed.emit())
                widget.setToolTip(tip(setting.help[:1].upper() + setting.help[1:]))
                self.widgets[setting.name] = widget
                form.addRow(setting.label, widget)
        self._unfold(False)

    def show_kind(self, taken: frozenset[str]) -> None:
        """Show the rows of the kind-specific settings the chosen backend kind ``taken``s,
        hide the others' (their values stay, for a kind that takes them)."""
        for name, widget in self.widgets.items():
            if SETTINGS[name].kind_specific:
                self._form.setRowVisible(widget, name in taken)

    def _unfold(self, on: bool) -> None:
        self.more_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        for name, widget in self.widgets.items():
            if SETTINGS[name].lane_only:
                self._form.setRowVisible(widget, on)

    def values(self) -> LaneSettings:
        """The settings shown; one whose widget was not edited is the value :meth:`show` was
        given, as it was: a spin box cannot hold None (the server's own temperature) nor
        0.333 (it shows two decimals), and neither may become something else unasked."""
        edited = {}
        for name, widget in self.widgets.items():
            value = _read(SETTINGS[name], widget)
            if name not in self._written or value != self._written[name]:
                edited[name] = value
        return self._shown.replace(**edited)

    def show(self, settings: LaneSettings) -> None:
        self._shown = settings
        for name, widget in self.widgets.items():
            widget.blockSignals(True)
            try:
                _write(SETTINGS[name], widget, settings[name])
            finally:
                widget.blockSignals(False)
            self._written[name] = _read(SETTINGS[name], widget)
        # A lane with a prompt, dialect, tools or steps of its own shows them.
        own = [
            n for n in self.widgets if SETTINGS[n].lane_only and settings[n] != SETTINGS[n].default
        ]
        self.more_button.setChecked(bool(own) or self.more_button.isChecked())
        self.changed.emit()

    def offer(self, name: str, choices: Sequence[tuple[str, str]]) -> None:
        """The values text setting ``name``'s box offers, as (words shown, value): a lane's
        prompt versions. What it shows stays (a value no longer offered stays as typed)."""
        combo = self.widgets.get(name)
        if not isinstance(combo, QComboBox):
            return
        value = _read(SETTINGS[name], combo)
        combo.blockSignals(True)
        try:
            while combo.count() > 1:  # the first item is None's: "The editor"
                combo.removeItem(1)
            for text, data in choices:
                combo.addItem(text, data)
            _write(SETTINGS[name], combo, value)
        finally:
            combo.blockSignals(False)


def _narrow(combo: QComboBox) -> QComboBox:
    """A box as narrow as a lane needs, not as wide as its longest entry ("The editor's
    prompt", a version's name): four lanes must fit an 800-pixel screen (tests/ui/test_fit)."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(8)
    return combo


def _widget_for(setting: Setting, changed: Callable[..., None]) -> QWidget:
    rule = setting.rule
    if rule.kind == "switch":
        box = QCheckBox()
        box.toggled.connect(changed)
        return box
    if rule.kind == "text":
        text = _narrow(QComboBox())
        text.setEditable(True)  # a version by id or name, typed, as a file may name it
        text.addItem(setting.none_text or "Default", None)
        text.currentIndexChanged.connect(changed)
        text.editTextChanged.connect(changed)
        return text
    if rule.kind == "names":
        names = QLineEdit()
        names.setPlaceholderText(setting.none_text or "Default")
        names.textChanged.connect(changed)
        return names
    if rule.kind == "choice":
        combo = _narrow(QComboBox())
        if rule.nullable:
            combo.addItem(setting.none_text or "Default", None)
        texts = dict(setting.choice_texts)
        for choice in rule.choices:
            combo.addItem(texts.get(choice, choice), choice)
        combo.currentIndexChanged.connect(changed)
        return combo
    if rule.kind == "number":
        spin = QDoubleSpinBox()
        spin.setRange(max(rule.low, -1e9), min(rule.high, 1e9))
        spin.setSingleStep(0.1)
        spin.valueChanged.connect(changed)
        return spin
    whole = QSpinBox()
    low, high = max(int(rule.low), _QT_INT[0] + 1), min(int(rule.high), _QT_INT[1])
    if rule.nullable:  # one below the range reads as None: "Auto"
        whole.setRange(low - 1, high)
        whole.setSpecialValueText(setting.none_text or "Default")
    else:
        whole.setRange(low, high)
    whole.valueChanged.connect(changed)
    return whole


def _read(setting: Setting, widget: QWidget) -> Any:
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, QComboBox) and widget.isEditable():  # text: an item, or as typed
        typed = widget.currentText().strip()
        found = widget.findText(typed)
        return widget.itemData(found) if found >= 0 else typed or None
    if isinstance(widget, QComboBox):
        return widget.currentData()
    if isinstance(widget, QLineEdit):  # names: blank is the default's
        if not widget.text().strip():
            return None
        try:
            return setting.rule.parse(widget.text(), setting.name)
        except SettingError:  # a name too long: the default's, as a blank box
            return None
    if isinstance(widget, QSpinBox):
        value = widget.value()
        return None if setting.rule.nullable and value == widget.minimum() else value
    assert isinstance(widget, QDoubleSpinBox)
    return widget.value()


def _write(setting: Setting, widget: QWidget, value: Any) -> None:
    if isinstance(widget, QCheckBox):
        widget.setChecked(bool(value))
    elif isinstance(widget, QComboBox) and widget.isEditable():
        found = widget.findData(value)
        if value is None or found >= 0:
            widget.setCurrentIndex(max(0, found))
        else:  # a value not offered (a version the history lacks): shown as written
            widget.setEditText(str(value))
    elif isinstance(widget, QComboBox):
        widget.setCurrentIndex(max(0, widget.findData(value)))
    elif isinstance(widget, QLineEdit):
        widget.setText("" if value is None else ", ".join(value) or "none")
    elif isinstance(widget, QSpinBox):
        widget.setValue(widget.minimum() if value is None else int(value))
    elif isinstance(widget, QDoubleSpinBox):
        # None (the server's own) shows as the default: what the box sends once touched.
        widget.setValue(float(value if value is not None else setting.default or 0.0))
