"""Prompt variants in the comparison: each lane's Prompt box offered the scenario's versions,
and **Matrix…**: N prompt versions × M models, a lane for each pair.

A pair is a :class:`LaneConfig` whose ``prompt`` setting pins its version (None: the
editor's), so a matrix is nothing but lanes: the run, its record, the table, exports and
recordings treat them as any lane. The lanes on screen stop at the lane limit (MAX_LANES:
traces side by side); the test-set grid shows cells, not traces, so it takes every pair, up to
:data:`MAX_PAIRS` columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import lane_label
from sandbox_app.application.workspace import Workspace
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import config_for
from sandbox_app.core.results.compare import MAX_LANES
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.prompt_versions import History, version_of
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.common.plain import message_box, plain_label
from sandbox_app.ui.lane.lane_widget import LaneWidget

MAX_PAIRS = 16  # the test-set grid's columns: 4 versions × 4 models
EDITOR = "The editor"


def version_choices(history: History) -> list[tuple[str, str]]:
    """The Prompt box's items, newest first: (name or short id · runs, the full id)."""
    return [
        (f"{entry.label} · {entry.runs} run{'s' if entry.runs != 1 else ''}", entry.id)
        for entry in reversed(history)
    ]


def pairs(versions: Sequence[str | None], models: Sequence[LaneConfig]) -> list[LaneConfig]:
    """Each version × each model, version by version: a model keeps its own server and
    settings, its prompt pinned to the version (None: the editor's)."""
    return [
        replace(model, settings=model.settings.replace(prompt=version))
        for version in versions
        for model in models
    ]


def short(version: str | None) -> str:
    return version[:8] if version else "editor"


def show_cell(lanes: Sequence[LaneWidget], label: str, record: RunRecord, title: str) -> None:
    """A test-set cell's run, kept and shown by its lane's pane like any of its runs (a
    matrix's pair past the lanes on screen has no pane: its cell's trace is not shown)."""
    lane = next((lane for lane in lanes if label.startswith(f"{lane.name} · ")), None)
    if lane is not None:
        lane.pane.show_record(record, title)


class MatrixDialog(QDialog):
    """Check the versions and the models; :meth:`pairs` is what OK makes. ``lanes``: the
    current lanes, whose models are offered (each once); more are typed, on the first
    checked model's server. ``editor``: the editor's version id, listed once, as the editor
    (named when the history has it). ``runs``: the runs the lanes keep, which OK would
    replace: asked first (:attr:`confirm`)."""

    def __init__(
        self,
        history: History,
        lanes: Sequence[LaneConfig],
        parent: QWidget,
        editor: str = "",
        runs: int = 0,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Matrix: prompt versions × models")
        self.runs = runs
        self.confirm: QMessageBox | None = None
        self.versions = QListWidget()
        choices = version_choices(history)
        held = next((text for text, version in choices if version == editor), None)
        self._add(self.versions, f"{EDITOR} · {held}" if held else EDITOR, None, checked=True)
        for text, version in choices:
            if version != editor:
                self._add(self.versions, text, version)
        self.models = QListWidget()
        self._models: list[LaneConfig] = []
        for lane in lanes:
            base = replace(lane, settings=lane.settings.replace(prompt=None))
            if base.model and base not in self._models:
                self._add(self.models, f"{base.model} ({base.backend})", len(self._models), True)
                self._models.append(base)
        self.more = QLineEdit()
        self.more.setPlaceholderText("more models, comma-separated")
        self.error = plain_label()
        self.error.setObjectName("matrixError")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._on_ok)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Prompt versions", self.versions)
        form.addRow("Models", self.models)
        form.addRow("", self.more)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    @staticmethod
    def _add(box: QListWidget, text: str, data: object, checked: bool = False) -> None:
        item = QListWidgetItem(text)  # a QListWidgetItem's text is plain: never markup
        item.setData(Qt.ItemDataRole.UserRole, data)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        box.addItem(item)

    @staticmethod
    def _checked(box: QListWidget) -> list[object]:
        return [
            box.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(box.count())
            if box.item(i).checkState() == Qt.CheckState.Checked
        ]

    def chosen_models(self) -> list[LaneConfig]:
        models = [self._models[int(str(i))] for i in self._checked(self.models)]
        typed = [name.strip() for name in self.more.text().split(",") if name.strip()]
        base = models[0] if models else LaneConfig("custom")
        models += [replace(base, model=name) for name in typed if name]
        return list(dict.fromkeys(models))

    def pairs(self) -> list[LaneConfig]:
        versions = [v if isinstance(v, str) else None for v in self._checked(self.versions)]
        return pairs(versions, self.chosen_models())

    def _on_ok(self) -> None:
        made = self.pairs()
        if not made:
            self.error.setText("Check at least one prompt version and one model.")
        elif len(made) > MAX_PAIRS:
            self.error.setText(f"{len(made)} pairs: a matrix has at most {MAX_PAIRS}.")
        elif self.runs:
            self._ask_then_accept()
        else:
            self.accept()

    def _ask_then_accept(self) -> None:
        """The lanes' runs would go with them: Replace, or Cancel back to this dialog."""
        buttons = QMessageBox.StandardButton
        box = self.confirm = message_box(
            QMessageBox.Icon.Question,
            "Replace the lanes?",
            f"The matrix's lanes replace the lanes shown, and the {self.runs} "
            f"run{'s' if self.runs != 1 else ''} they keep are gone. Replace them?",
            buttons.Yes | buttons.Cancel,
            self,
        )
        box.button(buttons.Yes).setText("Replace lanes")
        box.setDefaultButton(buttons.Cancel)

        def on_finished(_: int) -> None:
            if box.standardButton(box.clickedButton()) == buttons.Yes:
                self.accept()

        box.finished.connect(on_finished)
        box.open()


class LaneVariants:
    """The compare view's prompt variants: the Prompt boxes' versions, the Matrix, and the
    pairs past the lane limit that the test set still runs."""

    def __init__(
        self,
        keys: KeyStore,
        set_lanes: Callable[[tuple[LaneConfig, ...]], None],
        message: QLabel,
    ) -> None:
        self.keys, self.set_lanes, self.message = keys, set_lanes, message
        self.matrix: tuple[LaneConfig, ...] = ()  # the last Matrix's pairs, all of them

    def open_matrix(
        self, model: Workspace, lanes: Sequence[LaneConfig], runs: int, parent: QWidget
    ) -> MatrixDialog:
        """The dialog, open; ``runs``: how many runs the lanes keep (OK asks before)."""
        editor = version_of(model.scenario, model.tools()).id
        dialog = MatrixDialog(model.scenario.prompt_history, lanes, parent, editor, runs)
        dialog.accepted.connect(lambda: self.apply(dialog.pairs()))
        dialog.open()
        return dialog

    def offer(self, lanes: Sequence[LaneWidget], history: History) -> None:
        """Every lane's Prompt box offers the history's versions (what it shows stays)."""
        choices = version_choices(history)
        for lane in lanes:
            lane.backend_panel.settings_form.offer("prompt", choices)

    def eval_lanes(self, lanes: Sequence[LaneWidget]) -> list[BackendChoice]:
        """Each lane as the test-set runner takes it (its server, model and settings, its
        pinned version in its title), then the matrix's pairs past the lane limit."""
        out = []
        for lane in lanes:
            choice = lane.backend_panel.choice()
            pin = f" @ {short(choice.settings.prompt)}" if choice.settings.prompt else ""
            label = lane_label(f"{lane.name} · {choice.model}{pin}", choice.settings)
            out.append(BackendChoice(choice.config, choice.settings, label=label))
        return out + self.extra_eval_lanes([lane.config() for lane in lanes])

    def apply(self, made: Sequence[LaneConfig]) -> None:
        """The pairs as lanes (up to the limit); the test set takes them all."""
        self.matrix = tuple(made)
        self.set_lanes(self.matrix[:MAX_LANES])
        past = len(made) - MAX_LANES
        self.message.setText(
            f"{len(made)} pairs: the first {MAX_LANES} as lanes, all {len(made)} in the Test "
            "set tab"
            if past > 0
            else ""
        )

    def extra_eval_lanes(self, shown: Sequence[LaneConfig]) -> list[BackendChoice]:
        """The matrix's pairs past the lanes on screen, as the test set runs them, while the
        lanes are still the matrix's first pairs (an edited lane ends the matrix)."""
        if not self.matrix or tuple(shown) != self.matrix[: len(shown)]:
            self.matrix = ()
            return []
        extra = []
        for number, pair in enumerate(self.matrix[len(shown) :], len(shown) + 1):
            config = config_for(pair.backend, pair.base_url, pair.model)
            title = f"Pair {number} · {pair.model} @ {short(pair.settings.prompt)}"
            extra.append(
                BackendChoice(config, pair.settings, label=lane_label(title, pair.settings))
            )
        return extra
