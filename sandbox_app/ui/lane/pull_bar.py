"""Pull: fetch the model named in the panel onto a server that stores models (Ollama), with
its progress in a bar; the button reads Cancel while it pulls, and cancelling closes the
stream (the server stops the download). A failure is one line under the bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.backends.ollama_api.model_store import ModelStore, PullProgress, size_text
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.plain import plain_label

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")

PULL_TIP = "Download the model named above onto the server (ollama pull)"
STEPS = 1000  # the bar's range: a fraction in thousandths


class PullBar(QWidget):
    # The model pulled: the panel lists the server's models again, the new one among them.
    pulled = Signal(str)

    """The Pull button, its progress bar and status line."""

    def __init__(self, choice: Callable[[], BackendChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._choice = choice
        self._task: asyncio.Task[None] | None = None
        self._abandoned = False
        self.button = QPushButton("Pull")
        self.button.setToolTip(PULL_TIP)
        self.bar = QProgressBar()
        self.bar.setRange(0, STEPS)
        self.bar.setTextVisible(False)
        self.bar.hide()  # shown while a pull runs
        self.status = plain_label()
        self.status.setObjectName("pullStatus")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.button)
        row.addWidget(self.bar, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self.button.clicked.connect(self._on_button_clicked)

    @property
    def pulling(self) -> bool:
        return self._task is not None and not self._task.done()

    def abandon(self) -> None:
        """The panel is about to be deleted: stop pulling, show nothing more."""
        self._abandoned = True
        if self._task is not None:
            self._task.cancel()

    def _on_button_clicked(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()  # the button reads "Cancel" while it pulls
            return
        self._task = asyncio.ensure_future(self.pull())

    async def pull(self) -> None:
        choice = self._choice()
        model = choice.model
        if not model:
            self.status.setText("Type the name of the model to pull (e.g. qwen3:8b).")
            return
        backend = choice.create(Scenario())
        if not isinstance(backend, ModelStore):  # the kind does not say "pull"
            await backend.aclose()
            return
        self.button.setText("Cancel")
        self.button.setToolTip("Stop the download")
        self.bar.setValue(0)
        self.bar.show()
        self.status.setText(f"Pulling {model}…")
        status = ""
        try:
            async for progress in backend.pull(model):
                if not self._abandoned:
                    self._show(model, progress)
            status = f"Pulled {model}."
        except asyncio.CancelledError:
            status = f"Pull of {model} cancelled."
        except BackendError as err:
            status = f"⚠ {err}"
        except Exception as err:  # never a dead task with a stale bar on screen
            status = f"⚠ Could not pull {model}: {err}"
        finally:
            await backend.aclose()
        if self._abandoned:
            return
        self.button.setText("Pull")
        self.button.setToolTip(PULL_TIP)
        self.bar.hide()
        self.bar.setValue(0)
        self.status.setText(status)
        if status == f"Pulled {model}.":
            self.pulled.emit(model)

    def _show(self, model: str, progress: PullProgress) -> None:
        fraction = progress.fraction
        if fraction is None:
            self.status.setText(f"{model}: {progress.status}")
            return
        self.bar.setValue(round(fraction * STEPS))
        done, total = size_text(progress.completed), size_text(progress.total)
        self.status.setText(
            f"{model}: {progress.status} — {fraction:.0%} ({done or '0 KB'} of {total})"
        )
