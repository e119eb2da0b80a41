"""A model panel's API key: the field, Remember, and the key's status by the one key rule.

Keys typed here are kept by the account (host) they were typed for: a key never follows the
base URL to another host. What the backend kind says (keys.py's account, the key a moved
preset URL does not get) decides what is shown; a kind without a key shows its own line.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QWidget

from sandbox_app.backends.catalogue.keys import KeyAccount, KeyStore, host_of
from sandbox_app.backends.catalogue.kinds import BackendConfig, KeyHome
from sandbox_app.ui.common.plain import plain_label


class KeyField(QWidget):
    """The key row (field and Remember); ``status`` is its line, placed by the panel."""

    def __init__(self, keys: KeyStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keys = keys
        self._typed: dict[str, str] = {}  # account name → the key typed for it this session
        self._account: KeyAccount | None = None
        self._home: KeyHome | None = None
        self._about = ""
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setPlaceholderText("API key (not needed for local servers)")
        self.remember_button = QPushButton("Remember")
        self.remember_button.setToolTip("Store the key in the system keyring")
        self.status = plain_label()
        self.status.setWordWrap(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.remember_button)
        self.edit.textChanged.connect(self._on_edit_text_changed)
        self.remember_button.clicked.connect(self._on_remember_button_clicked)

    def typed(self) -> str:
        return self.edit.text().strip()

    def show_for(self, config: BackendConfig, backend_changed: bool) -> None:
        """The panel shows ``config`` now: its account's typed key and status."""
        kind = config.kind
        self.setEnabled(kind.account is not None)
        account = kind.account(config) if kind.account else None
        self._home = kind.key_home(config) if kind.key_home and account else None
        self._about = kind.about
        moved = account != self._account
        if moved:
            self._account = account
            # The field shows only what was typed for this host; the rest is in the status.
            self.edit.setText(self._typed.get(account.name, "") if account else "")
        # Typing a URL on one host looks nothing up again (the keyring can be slow).
        if backend_changed or moved:
            self.show_status()

    def show_status(self) -> None:
        account = self._account
        if account is None:
            self.status.setText(self._about)
            return
        key, source = self.keys.resolve(account, self.typed())
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
        if self._home is not None:
            text += f" The {self._home.name} key goes only to {host_of(self._home.base_url)}."
        self.status.setText(text)

    def _on_edit_text_changed(self, text: str) -> None:
        if self._account is not None:
            self._typed[self._account.name] = text.strip()
        self.show_status()

    def _on_remember_button_clicked(self) -> None:
        account = self._account
        key = self.typed()
        if account is None or not key:
            return
        if self.keys.save(account, key):
            self.status.setText("Saved in the system keyring.")
        else:
            self.status.setText(
                "No system keyring is available: the key is kept for this session only."
            )
