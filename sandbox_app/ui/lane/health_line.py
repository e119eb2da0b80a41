"""The health check in the model panel: a Check button, and the findings under the model row.

A local server (an address on localhost or a private network) is checked by itself a moment
after it is chosen (a preset, a URL, a model typed); any other server when Check is pressed.
The check runs on the network loop (backends/local_servers/health.py), never on the GUI thread,
never
blocks a run, and choosing something else cancels it. The lines are the ones
``react-sandbox doctor`` prints, shown as plain text (ui/common/plain.py): a model's name or
a server's error is never read as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from sandbox_app.backends.catalogue.keys import host_of
from sandbox_app.backends.catalogue.kinds import BackendConfig
from sandbox_app.backends.local_servers.served import is_local
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.tools import Tool
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.plain import plain_label

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


if TYPE_CHECKING:  # the probes are imported at the first check (not on the first frame's path)
    from sandbox_app.backends.local_servers.health import Health

CHECK_TIP = (
    "Ask the server which one it is, whether it has the model loaded, the context it serves "
    "now against what this scenario needs, and what the model can do"
)
AUTO_DELAY_MS = 700  # after the last keystroke in the URL or model: one check, not one a key

# The scenario and tools a run in this lane would have (set by the lane's runner), for the
# context the run needs; None: the check says nothing about context.
Subject = Callable[[], tuple[Scenario, Sequence[Tool]]]


class HealthLine(QWidget):
    """The findings (a plain label) and the Check button the panel places in its model row.

    Signals:
        checked(Health): a check finished and its lines are shown.
    """

    checked = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.subject: Subject | None = None
        self.button = QPushButton("Check")
        self.button.setToolTip(CHECK_TIP)
        self.label = plain_label()
        self.label.setObjectName("healthLine")
        self.label.setWordWrap(True)
        self.label.hide()
        # Check beside its findings, not in the model row: four compare lanes must fit 1440 px.
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.label, 1)
        self._config: BackendConfig | None = None
        self._task: asyncio.Task[None] | None = None
        self._found: tuple[tuple[str, str, str], Health] | None = None  # the last check's
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(AUTO_DELAY_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.button.clicked.connect(self._on_button_clicked)

    def lines(self) -> list[str]:
        text = self.label.text()
        return text.splitlines() if self.label.isVisibleTo(self) and text else []

    def chosen(self, config: BackendConfig) -> None:
        """The panel shows ``config`` now: a server kind can be checked; a local one is, soon."""
        same = self._config is not None and _where(self._config) == _where(config)
        self._config = config
        self.button.setEnabled(config.kind.server)
        if not same:
            self.cancel()
        if config.kind.server and config.url and is_local(config.url):
            self._timer.start()  # again at each change: checked once the typing stops
        else:
            self._timer.stop()

    @property
    def pending(self) -> bool:
        """A check is due (its moment not yet come) or under way: it will ask the server."""
        return self._timer.isActive() or (self._task is not None and not self._task.done())

    def served_context(self, config: BackendConfig) -> int | None:
        """The context window the last check found served for ``config`` (None: not checked,
        or checked for another server or model)."""
        if self._found is None or self._found[0] != _where(config):
            return None
        return self._found[1].served_context

    def check(self) -> None:
        """Check the chosen server now (Check, or the automatic one)."""
        self._timer.stop()
        config = self._config
        if config is None or not config.kind.server:
            return
        self.cancel()
        self._show([f"Checking {host_of(config.url) or config.url}…"])
        subject = self.subject() if self.subject is not None else None
        scenario, tools = subject if subject is not None else (None, ())
        self._task = asyncio.ensure_future(self._check(config, scenario, tools))

    def cancel(self) -> None:
        """Stop a check under way and clear what an earlier one said."""
        self._timer.stop()
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self._show([])

    async def _check(
        self, config: BackendConfig, scenario: Scenario | None, tools: Sequence[Tool]
    ) -> None:
        try:
            from sandbox_app.backends.local_servers.health import check_in_background

            health = await check_in_background(config, scenario, tools)
        except asyncio.CancelledError:
            return  # something else was chosen: its own check, or none, is shown
        except Exception as err:  # never a dead task with "Checking…" left on screen
            with suppress(RuntimeError):  # the panel was deleted meanwhile (a removed lane)
                self._show([f"⚠ The check failed: {err}"])
            return
        with suppress(RuntimeError):
            self._found = (_where(config), health)
            self._show(health.lines())
            self.checked.emit(health)

    def _show(self, lines: list[str]) -> None:
        self.label.setText("\n".join(lines))
        self.label.setVisible(bool(lines))

    def _on_timer_timeout(self) -> None:
        self.check()

    def _on_button_clicked(self) -> None:
        self.check()


def _where(config: BackendConfig) -> tuple[str, str, str]:
    return config.backend, config.url, config.model
