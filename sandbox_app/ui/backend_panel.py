"""Choose the model: the offline scripted model, a preset server, or any OpenAI-compatible URL."""

from __future__ import annotations

import asyncio
import time

from PySide6.QtCore import QTimer, Signal
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
from sandbox_app.backends.keys import KeyAccount, KeyStore, UrlSource, account_for, host_of
from sandbox_app.backends.presets import CUSTOM, Preset, preset_with_id
from sandbox_app.backends.registry import (
    BACKEND_IDS,
    SCRIPTED,
    BackendConfig,
    backend_id,
    display_name,
    effective_preset,
)
from sandbox_app.core.backend import BackendError
from sandbox_app.core.lane_settings import LaneSettings
from sandbox_app.core.scenario import Scenario
from sandbox_app.ui.lane_settings_form import LaneSettingsForm
from sandbox_app.ui.plain import plain_label, rich_label
from sandbox_app.ui.server_memory import ServerMemory

REFRESH_TIP = "Ask the server for its models (/v1/models)"


class BackendPanel(QWidget):
    """Preset, URL, key, model list and sampling settings.

    Signals:
        changed(): any setting changed.
    """

    changed = Signal()

    def __init__(self, keys: KeyStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keys = keys
        # Keys typed in this panel, by the account (host) they were typed for: a key never
        # follows the base URL to another host.
        self._typed: dict[str, str] = {}
        self._account: KeyAccount | None = None
        self._file_url: str | None = None  # the base URL as a scenario file named it
        self._refresh_task: asyncio.Task[list[str]] | None = None
        self._abandoned = False
        self.memory = ServerMemory()  # switching away and back keeps a URL and model
        self.preset_combo = QComboBox()
        for backend in BACKEND_IDS:  # shown by name, known by stable id
            self.preset_combo.addItem(display_name(backend), backend)
        self.base_url_edit = QLineEdit()
        self.base_url_edit.setPlaceholderText("http://localhost:11434/v1")
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("API key (not needed for local servers)")
        self.remember_button = QPushButton("Remember")
        self.remember_button.setToolTip("Store the key in the system keyring")
        self.key_status = plain_label()
        self.key_status.setWordWrap(True)
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
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setRange(0.5, 600.0)
        self.timeout_spin.setValue(60.0)
        self.timeout_spin.setSuffix(" s")
        self.timeout_spin.setToolTip("How long to wait for the server before giving up")

        key_row = QHBoxLayout()
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(self.remember_button)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_combo, 1)
        model_row.addWidget(self.refresh_button)
        form = QFormLayout()
        # In a narrow compare lane or a small window, labels go above their fields.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Backend", self.preset_combo)
        form.addRow("Base URL", self.base_url_edit)
        form.addRow("API key", key_row)
        form.addRow("", self.key_status)
        form.addRow("Model", model_row)
        form.addRow("", self.models_status)
        self.settings_form = LaneSettingsForm(form, self)  # a row per lane setting
        form.addRow("Timeout", self.timeout_spin)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(rich_label("<b>Model</b>"))
        layout.addLayout(form)

        self.preset_combo.currentTextChanged.connect(self._on_preset_combo_changed)
        self.base_url_edit.textChanged.connect(self._on_base_url_edit_text_changed)
        self.key_edit.textChanged.connect(self._on_key_edit_text_changed)
        self.remember_button.clicked.connect(self._on_remember_button_clicked)
        self.refresh_button.clicked.connect(self._on_refresh_button_clicked)
        for signal in (
            self.base_url_edit.textChanged,
            self.model_combo.currentTextChanged,
            self.settings_form.changed,
        ):
            signal.connect(self.changed)
        self._on_preset_combo_changed()

    # ---- reading and writing the settings ---------------------------------------------

    def backend_id(self) -> str:
        return str(self.preset_combo.currentData())

    def preset(self) -> Preset | None:
        backend = self.backend_id()
        return None if backend == SCRIPTED else preset_with_id(backend)

    def choice(self) -> BackendChoice:
        preset = self.preset()
        base_url = self.base_url_edit.text().strip()
        config = BackendConfig(
            preset,
            base_url,
            self.model_combo.currentText().strip() if preset else "scripted",
            self.timeout_spin.value(),
            self.key_edit.text().strip() if preset else "",
            "file" if self._file_url == base_url else "user",
        )
        return BackendChoice(config, self.settings_form.values(), self.keys)

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
        if base_url and self.preset() is not None:
            self.base_url_edit.setText(base_url)
        if model:
            self.model_combo.setCurrentText(model)
        shown = self.base_url_edit.text().strip()
        self._file_url = shown if source == "file" and base_url else None

    def set_sampling(self, settings: LaneSettings) -> None:
        """Show a scenario's or a lane's lane settings (core/lane_settings.py)."""
        self.settings_form.show(settings)

    # ---- the model list ---------------------------------------------------------------

    async def refresh_models(self) -> list[str]:
        """Fill the model list from the server; errors show inline, never as a crash."""
        choice = self.choice()
        if choice.config.preset is None:
            self._set_models(["scripted"], "The offline model replays the scenario's script.")
            return ["scripted"]
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
        try:
            models = await backend.list_models()
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
            else:
                self.models_status.setText(status)
        return models

    def abandon(self) -> None:
        """The panel is about to be deleted (a removed lane): stop asking for models."""
        self._abandoned = True
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
        preset = self.preset()
        server = preset is not None
        for widget in (self.base_url_edit, self.key_edit, self.remember_button, self.model_combo):
            widget.setEnabled(server)
        self.refresh_button.setEnabled(server)
        self.settings_form.widgets["temperature"].setEnabled(server)
        self.timeout_spin.setEnabled(server)
        if preset is None:
            self.base_url_edit.clear()
            self._set_models(["scripted"], "")
        else:
            if preset is not CUSTOM:
                self.base_url_edit.setText(preset.base_url)
            self.model_combo.clear()
            self.models_status.setText("Press Refresh to list the server's models.")
            self.base_url_edit.setText(url or self.base_url_edit.text())
            self.model_combo.setCurrentText(model)
        self._update_key_account(preset_changed=True)
        self.changed.emit()

    # ---- keys: one rule (backends/keys.py), shown as it applies ------------------------

    def _current_account(self) -> KeyAccount | None:
        preset = self.preset()
        if preset is None:
            return None
        base_url = self.base_url_edit.text().strip() or preset.base_url
        return account_for(effective_preset(preset, base_url), base_url)

    def _on_base_url_edit_text_changed(self, _text: str) -> None:
        self._update_key_account(preset_changed=False)

    def _update_key_account(self, preset_changed: bool) -> None:
        account = self._current_account()
        moved = account != self._account
        if moved:
            self._account = account
            # The field shows only what was typed for this host; the rest is in the status.
            self.key_edit.setText(self._typed.get(account.name, "") if account else "")
        # Typing a URL on one host looks nothing up again (the keyring can be slow).
        if preset_changed or moved:
            self.show_key_status()

    def _on_key_edit_text_changed(self, text: str) -> None:
        if self._account is not None:
            self._typed[self._account.name] = text.strip()
        self.show_key_status()

    def show_key_status(self) -> None:
        preset, account = self.preset(), self._account
        if preset is None or account is None:
            self.key_status.setText("Offline: replays the scenario's written replies.")
            return
        key, source = self.keys.resolve(account, self.key_edit.text().strip())
        if source == "typed":
            text = f"Key typed for {account.name}."
        elif source == "environment":
            text = f"Key from the environment ({account.env_var})."
        elif source in ("keyring", "unasked"):  # unasked: asked after the first frame (app.py)
            text = "Key from the system keyring." if key else "Looking in the system keyring…"
        elif account.preset_host:
            text = f"Needs a key ({account.env_var})."
        else:
            text = f"No key sent (type one, or set {account.env_var})."
        if preset.key_env and not account.preset_host:
            text += f" The {preset.name} key goes only to {preset.base_url.split('/')[2]}."
        self.key_status.setText(text)

    def _on_remember_button_clicked(self) -> None:
        account = self._account
        key = self.key_edit.text().strip()
        if account is None or not key:
            return
        if self.keys.save(account, key):
            self.key_status.setText("Saved in the system keyring.")
        else:
            self.key_status.setText(
                "No system keyring is available: the key is kept for this session only."
            )

    def _on_refresh_button_clicked(self) -> None:
        if self._refresh_task is not None and not self._refresh_task.done():
            self._refresh_task.cancel()  # the button reads "Cancel" while it waits
            return
        self._refresh_task = asyncio.ensure_future(self.refresh_models())
