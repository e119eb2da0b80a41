"""Asking the user, once per host and session, whether a server a file named may get a key.

The key rule (backends/catalogue/keys.py) holds a key back from a URL that came from a file — a
scenario's lanes, a test set's — until the user confirms that host. This is the window's
side of it: one dialog naming the host and the key, whose answer holds for the session; runs
waiting on it start when it is answered, with or without the key. Everything shown is plain
text: the host comes from the file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget

from sandbox_app.backends.catalogue.keys import KeyStore, origin_of
from sandbox_app.backends.registry import BackendConfig, key_decision, key_notice
from sandbox_app.ui.common.plain import set_informative


class KeyConfirmDialog(QMessageBox):
    """Send the key to a host a file named? "Run without a key" is the default."""

    def __init__(self, host: str, where: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Send your key to a server named by a file?")
        self.setIcon(QMessageBox.Icon.Warning)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(
            f"{where} runs against {host}, a server the scenario file named, not you. "
            "Send it your API key?"
        )
        set_informative(
            self,
            "Only if you know this server: a file from someone else could name a server that "
            "collects keys. The answer holds until the app closes.",
        )
        self.send_button = self.addButton("Send the key", QMessageBox.ButtonRole.AcceptRole)
        self.without_button = self.addButton("Run without a key", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.without_button)
        self.setEscapeButton(self.without_button)


class KeyConfirmation:
    """Runs ``go`` once every file-named host among some configs has the user's answer."""

    def __init__(self, keys: KeyStore, parent: Callable[[], QWidget]) -> None:
        self.keys = keys
        self._parent = parent
        self._declined: set[str] = set()  # origins the user chose to run without a key
        self._dialog: KeyConfirmDialog | None = None
        self._waiting: list[tuple[Sequence[BackendConfig], str, Callable[[], None]]] = []

    def then(self, configs: Sequence[BackendConfig], where: str, go: Callable[[], None]) -> None:
        """Ask about the first unanswered host (if any), then start ``go``."""
        self._waiting.append((configs, where, go))
        if self._dialog is None:
            self._next()

    def _unanswered(self, configs: Sequence[BackendConfig]) -> BackendConfig | None:
        for config in configs:
            url = config.url
            if key_decision(config, self.keys).confirm and origin_of(url) not in self._declined:
                return config
        return None

    def _next(self) -> None:
        while self._waiting:
            configs, where, go = self._waiting[0]
            config = self._unanswered(configs)
            if config is not None:
                self._ask(config, where)
                return
            self._waiting.pop(0)
            for notice in filter(None, (key_notice(c, self.keys) for c in configs)):
                self._say(f"⚠ {notice}.")
            go()

    def _say(self, text: str) -> None:
        """One line where the user looks: the window's status bar."""
        window = self._parent().window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text)

    def _ask(self, config: BackendConfig, where: str) -> None:
        url = config.base_url
        dialog = KeyConfirmDialog(key_decision(config, self.keys).confirm, where, self._parent())
        self._dialog = dialog

        def answered(_: int) -> None:
            if dialog.clickedButton() is dialog.send_button:
                self.keys.trust_host(url)
            else:
                self._declined.add(origin_of(url))
            self._dialog = None
            dialog.deleteLater()
            self._next()

        dialog.finished.connect(answered)
        dialog.open()
