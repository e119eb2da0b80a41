"""The request inspector: what one step sent and got back, exactly.

For each request of the step (a step asked again has several): the JSON body as sent (roles,
model, parameters; never the key), the reply as it streamed before any parsing or cut, its
thinking, finish reason, usage and timing. Copy as JSON, or as a curl command to the kind's
own endpoint whose key is the variable the key rule reads for that server (``$GROQ_API_KEY``,
…), in the kind's own header; none where the rule sends that server no key from there.
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.backends.registry import curl_request
from sandbox_app.core.running.events import Exchange
from sandbox_app.core.running.fork import as_curl, as_json
from sandbox_app.ui.common.plain import plain_label, tip


class RequestInspector(QDialog):
    def __init__(
        self,
        step: int,
        exchanges: list[Exchange],
        backend: str,
        base_url: str,
        model: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Step {step}: request and reply")
        self.resize(820, 620)
        self.exchanges = exchanges
        self.curl = curl_request(backend, base_url, model)
        asked = f" was asked {len(exchanges)} times: each request" if len(exchanges) > 1 else ""
        self.heading = plain_label(f"Step {step}{asked or ': the request'} and its reply, as sent")
        self.text = QPlainTextEdit("\n\n".join(as_json(e) for e in exchanges))
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.copy_json_button = QPushButton("Copy as JSON")
        self.copy_curl_button = QPushButton("Copy as curl")
        said = (
            f"The key is written as ${self.curl.key_variable} (where the app reads this "
            "server's key), never its value"
            if self.curl.key_variable
            else f"No key is written: {self.curl.withheld or 'this server takes none'}"
        )
        self.copy_curl_button.setToolTip(tip(said))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        row = QHBoxLayout()
        row.addWidget(self.copy_json_button)
        row.addWidget(self.copy_curl_button)
        row.addStretch(1)
        row.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.text, 1)
        layout.addLayout(row)
        self.copy_json_button.clicked.connect(self.copy_json)
        self.copy_curl_button.clicked.connect(self.copy_curl)
        buttons.rejected.connect(self.reject)

    def copy_json(self) -> None:
        QApplication.clipboard().setText(self.text.toPlainText())

    def copy_curl(self) -> None:
        QApplication.clipboard().setText(
            as_curl(self.exchanges[-1], self.curl.url, self.curl.headers)
        )
