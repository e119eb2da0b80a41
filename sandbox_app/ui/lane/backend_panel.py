"""Choose the model: any backend the registry knows (the offline scripted model, a preset
server, any OpenAI-compatible URL, …), with the fields its kind declares."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.backends.catalogue.keys import KeyStore, UrlSource, host_of
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Field
from sandbox_app.backends.ollama_api.model_store import ModelStore
from sandbox_app.backends.registry import (
    SCRIPTED,
    backend_id,
    backend_ids,
    config_for,
    display_name,
)
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.plain import plain_label, rich_label, tip
from sandbox_app.ui.lane.health_line import HealthLine
from sandbox_app.ui.lane.key_field import KeyField
from sandbox_app.ui.lane.lane_settings_form import LaneSettingsForm
from sandbox_app.ui.lane.pull_bar import PullBar
from sandbox_app.ui.lane.server_memory import ServerMemory

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")

REFRESH_TIP = "Ask the server for its models (/v1/models)"


class BackendPanel(QWidget):
    """Preset, URL, key, model list and sampling settings.

    Signals:
        changed(): any setting changed.
    """

    changed = Signal()

    def __init__(self, keys: KeyStore, parent: QWidget | None = None, lane: bool = False) -> None:
        super().__init__(parent)
        self.keys = keys
        self._file_url: str | None = None  # the base URL as a scenario file named it
        self._refresh_task: asyncio.Task[list[str]] | None = None
        self._abandoned = False
        self.memory = ServerMemory()  # switching away and back keeps a URL and model
        self.preset_combo = QComboBox()
        for backend in backend_ids():  # every kind's, shown by name, known by stable id
            self.preset_combo.addItem(display_name(backend), backend)
        self.base_url_edit = QLineEdit()
        self.base_url_edit.setPlaceholderText("http://localhost:11434/v1")
        self.key_field = KeyField(keys)
        self.key_edit, self.key_status = self.key_field.edit, self.key_field.status
        self.remember_button = self.key_field.remember_button
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)
        self.model_combo.setMinimumContentsLength(10)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip(REFRESH_TIP)
        self._asking_timer = QTimer(self)
        self._asking_timer.setInterval(1000)
        self._asking_timer.timeout.connect(self._on_asking_timer_timeout)
        self._asking_started = 0.0
        self._asking_host = ""
        self.models_status = plain_label()
        self.models_status.setObjectName("modelsStatus")
        self.models_status.setWordWrap(True)
        self.pull_bar = PullBar(self.choice)  # a kind with "pull" (Ollama's own API)
        self.pull_bar.pulled.connect(lambda _model: self._on_refresh_button_clicked())
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setRange(0.5, 600.0)
        self.timeout_spin.setValue(60.0)
        self.timeout_spin.setSuffix(" s")
        self.timeout_spin.setToolTip("How long to wait for the server before giving up")

        model_row = QHBoxLayout()
        model_row.addWidget(self.model_combo, 1)
        model_row.addWidget(self.refresh_button)
        self.health_line = HealthLine(self)  # Check, and the findings under the model row
        form = QFormLayout()
        # In a narrow compare lane or a small window, labels go above their fields.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Backend", self.preset_combo)
        form.addRow("Base URL", self.base_url_edit)
        form.addRow("API key", self.key_field)
        form.addRow("", self.key_status)
        form.addRow("Model", model_row)
        form.addRow("", self.models_status)
        form.addRow("", self.health_line)
        form.addRow("", self.pull_bar)
        self._form = form  # rows a kind has or not (Check: a server's; Pull: Ollama's own)
        # A row per lane setting (a compare lane's, ``lane``, also its prompt, dialect…).
        self.settings_form = LaneSettingsForm(form, self, lane)
        form.addRow("Timeout", self.timeout_spin)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.heading = rich_label("<b>Model</b>")  # the window's bar says it (model_bar.py)
        layout.addWidget(self.heading)
        layout.addLayout(form)

        self.preset_combo.currentTextChanged.connect(self._on_preset_combo_changed)
        self.base_url_edit.textChanged.connect(self._on_base_url_edit_text_changed)
        self.refresh_button.clicked.connect(self._on_refresh_button_clicked)
        for signal in (
            self.base_url_edit.textChanged,
            self.model_combo.currentTextChanged,
            self.settings_form.changed,
        ):
            signal.connect(self.changed)
        self.changed.connect(self._on_changed)
        self._on_preset_combo_changed()

    # ---- reading and writing the settings ---------------------------------------------

    def backend_id(self) -> str:
        return str(self.preset_combo.currentData())

    def kind(self) -> BackendKind:
        return config_for(self.backend_id()).kind

    def choice(self) -> BackendChoice:
        kind = self.kind()
        base_url = self.base_url_edit.text().strip() if kind.has("base_url") else ""
        model = self.model_combo.currentText().strip() if kind.has("model") else kind.fixed_model
        config = config_for(
            self.backend_id(),
            base_url,
            model,
            self.timeout_spin.value(),
            self.key_field.typed() if kind.has("key") else "",
            "file" if self._file_url == base_url else "user",
        )
        served = self.health_line.served_context(config)
        return BackendChoice(config, self.settings_form.values(), self.keys, served)

    def select(
        self, backend: str, base_url: str = "", model: str = "", source: UrlSource = "user"
    ) -> None:
        """Choose a backend by id (or by an older file's display label), URL and model.

        ``source`` "file": the URL came from a scenario file, so the key rule holds keys back
        from it until the user confirms its host (as long as the URL stays the file's).
        """
        try:
            known = backend_id(backend)
        except ValueError as err:
            known = SCRIPTED
            self.models_status.setText(f"⚠ {err}: using the offline model.")
        self.preset_combo.setCurrentIndex(self.preset_combo.findData(known))
        if base_url and self.kind().has("base_url"):
            self.base_url_edit.setText(base_url)
        if model:
            self.model_combo.setCurrentText(model)
        shown = self.base_url_edit.text().strip()
        self._file_url = shown if source == "file" and base_url else None

    def set_sampling(self, settings: LaneSettings) -> None:
        """Show a scenario's or a lane's lane settings (core/scenarios/lane_settings.py)."""
        self.settings_form.show(settings)

    # ---- the model list ---------------------------------------------------------------

    async def refresh_models(self) -> list[str]:
        """Fill the model list from the server; errors show inline, never as a crash."""
        choice = self.choice()
        if not choice.config.kind.has("models"):  # nothing to ask: the panel shows its model
            self._set_models([choice.model], choice.config.kind.about)
            return [choice.model]
        backend = choice.create(Scenario())
        # A server that accepts the connection and never answers would hold Refresh for the
        # whole timeout: the button becomes Cancel and the status counts the seconds.
        self.refresh_button.setText("Cancel")
        self.refresh_button.setToolTip("Stop waiting for the server's model list")
        self._asking_started = time.monotonic()
        self._asking_host = host_of(choice.base_url)
        self._on_asking_timer_timeout()
        self._asking_timer.start()
        status = ""
        models: list[str] = []
        notes: Mapping[str, str] = {}  # a model store's sizes, what is loaded
        try:
            models = await backend.list_models()
            notes = backend.model_notes if isinstance(backend, ModelStore) else {}
            status = f"{len(models)} models on {choice.base_url}."
        except asyncio.CancelledError:
            status = "Cancelled: the server had not answered."
        except BackendError as err:
            status = f"⚠ {err}"
        except Exception as err:  # never a dead task with a stale "Asking…" on screen
            status = f"⚠ Could not list the models: {err}"
        finally:
            await backend.aclose()  # first: the panel may be gone, the connection must close
        if not self._abandoned:  # a removed lane's widgets are deleted: nothing to show
            self._asking_timer.stop()
            self.refresh_button.setText("Refresh")
            self.refresh_button.setToolTip(REFRESH_TIP)
            if models:
                self._set_models(models, status)
                for index, name in enumerate(models):  # "qwen3:8b — 5.2 GB, loaded"
                    if notes.get(name):
                        note = tip(f"{name} — {notes[name]}")
                        self.model_combo.setItemData(index, note, Qt.ItemDataRole.ToolTipRole)
            else:
                self.models_status.setText(status)
        return models

    def abandon(self) -> None:
        """The panel is about to be deleted (a removed lane): stop asking for models."""
        self._abandoned = True
        self.health_line.cancel()
        self.pull_bar.abandon()
        if self._refresh_task is not None:
            self._refresh_task.cancel()

    def _on_asking_timer_timeout(self) -> None:
        waited = time.monotonic() - self._asking_started
        seconds = f" {waited:.0f} s" if waited >= 0.5 else ""  # the first tick says "1 s"
        self.models_status.setText(f"Asking {self._asking_host} for its models…{seconds}")

    def _set_models(self, models: list[str], status: str) -> None:
        current = self.model_combo.currentText()
        self.model_combo.clear()
        self.model_combo.addItems(models)
        if current in models:
            self.model_combo.setCurrentText(current)
        self.models_status.setText(status)

    # ---- slots ------------------------------------------------------------------------

    def _on_preset_combo_changed(self, _name: str = "") -> None:
        shown = self.base_url_edit.text(), self.model_combo.currentText()  # the one left
        url, model = self.memory.switch(self.backend_id(), *shown)
        kind = self.kind()
        for name, widget in self._fields().items():  # what the kind declares, enabled
            widget.setEnabled(kind.has(name))
        self.settings_form.show_kind(kind.settings)
        # Hidden, not greyed: four lanes of the offline model must keep their traces in view.
        self._form.setRowVisible(self.health_line, kind.server)
        self._form.setRowVisible(self.pull_bar, kind.has("pull"))
        own_url = kind.choice(self.backend_id()).base_url
        if not kind.has("base_url"):
            self.base_url_edit.clear()
        elif own_url:  # a preset's URL; a custom one keeps what is typed
            self.base_url_edit.setText(own_url)
        if kind.has("model"):
            self.model_combo.clear()
            asks = kind.has("models")
            self.models_status.setText("Press Refresh to list the server's models." if asks else "")
            self.base_url_edit.setText(url or self.base_url_edit.text())
            self.model_combo.setCurrentText(model)
        else:
            self._set_models([kind.fixed_model], "")
        self._update_key_account(backend_changed=True)
        self.changed.emit()

    def _on_changed(self) -> None:
        self.health_line.chosen(self.choice().config)  # a local server is checked by itself

    def _fields(self) -> dict[Field, QWidget]:
        return {
            "base_url": self.base_url_edit,
            "key": self.key_field,
            "model": self.model_combo,
            "models": self.refresh_button,
            "timeout": self.timeout_spin,
            "temperature": self.settings_form.widgets["temperature"],
            "pull": self.pull_bar,
        }

    # ---- keys: one rule (backends/catalogue/keys.py), shown as it applies (ui/lane/key_field.py) -

    def _shown_config(self) -> BackendConfig:
        return config_for(self.backend_id(), self.base_url_edit.text().strip())

    def _on_base_url_edit_text_changed(self, _text: str) -> None:
        self._update_key_account(backend_changed=False)

    def _update_key_account(self, backend_changed: bool) -> None:
        self.key_field.show_for(self._shown_config(), backend_changed)

    def show_key_status(self) -> None:
        self.key_field.show_status()

    def _on_refresh_button_clicked(self) -> None:
        if self._refresh_task is not None and not self._refresh_task.done():
            self._refresh_task.cancel()  # the button reads "Cancel" while it waits
            return
        self._refresh_task = asyncio.ensure_future(self.refresh_models())


def kind_caption(config: BackendConfig) -> str:
    """Which backend and of which kind, for a lane's header and the window's model bar: a kind
    of its own by its name ("Anthropic", "Ollama (native)"), a preset of a kind with many
    beside its kind's name ("Ollama (OpenAI-compatible server)"), so two lanes on one server
    say which API each uses."""
    kind = config.kind
    name = kind.choice(config.backend).name
    return name if not kind.choices or name == kind.name else f"{name} ({kind.name})"
