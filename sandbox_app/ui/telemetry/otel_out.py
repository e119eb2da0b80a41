"""The window's OpenTelemetry out: the endpoint and headers kept (the endpoint and header
names in the app's settings, each header's value in the keyring through the KeyStore), one
export at a time on a thread of its own, and live mode.

Live mode sends each run's spans while it streams (application/otel_live.py): the Run tab's
and every compare lane's pane are followed (their controllers' event batches, after the pane
has recorded them); the GUI thread only makes a few spans a step, the SDK's batch thread does
the network. A collector that cannot be reached is one status line, once; the run goes on.

Nothing here imports OpenTelemetry: the window's start never loads it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Signal

from sandbox_app.backends.catalogue.keys import KeyAccount, KeyStore, host_of

if TYPE_CHECKING:  # the span modules are imported when first exported (not at start-up)
    from PySide6.QtWidgets import QStatusBar

    from sandbox_app.application.otel_export import OtlpTarget
    from sandbox_app.application.otel_live import LiveExport, LiveRun
    from sandbox_app.core.otel.otel_attributes import SpanPlan
    from sandbox_app.core.running.events import Event
    from sandbox_app.core.running.records import RunRecord
    from sandbox_app.ui.lane.run_pane import RunPane

ENDPOINT, HEADERS, CONTENT, LIVE = "otel/endpoint", "otel/headers", "otel/content", "otel/live"


def header_account(endpoint: str, name: str) -> KeyAccount:
    """Where a header's value is kept: the keyring, per endpoint host and header name."""
    return KeyAccount(f"OTLP header {name} for {host_of(endpoint)}", "", preset_host=False)


class OtelOut(QObject):
    """Signals: ``said(str)``: one line for the status bar (from any thread: queued)."""

    said = Signal(str)

    def __init__(self, settings: QSettings, keys: KeyStore, status: QStatusBar) -> None:
        super().__init__()
        self.settings, self.keys = settings, keys
        self.said.connect(status.showMessage)
        self._live: LiveExport | None = None
        self._followed: dict[int, str] = {}  # pane id → lane name
        self._runs: dict[int, tuple[RunRecord, LiveRun]] = {}
        self.busy = False  # an export is on its way
        self._restored = False  # live mode's setting read (at the first run)

    # ---- what is kept ---------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return str(self.settings.value(ENDPOINT, "") or "")

    @property
    def header_names(self) -> list[str]:
        try:
            names = json.loads(str(self.settings.value(HEADERS, "[]") or "[]"))
        except ValueError:
            return []
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def headers(self) -> dict[str, str]:
        """The kept headers with their values from the keyring (a missing one is left out)."""
        found = {n: self.keys.stored(header_account(self.endpoint, n)) for n in self.header_names}
        return {name: value for name, value in found.items() if value}

    @property
    def content(self) -> bool:
        """Message content to the endpoint: off unless the user turned it on."""
        return str(self.settings.value(CONTENT, "false")).lower() == "true"

    @property
    def live(self) -> bool:
        return self._live is not None

    def keep(self, endpoint: str, headers: dict[str, str], content: bool, live: bool) -> None:
        """The endpoint, header names and content setting in settings; values in the keyring."""
        self.settings.setValue(ENDPOINT, endpoint)
        self.settings.setValue(HEADERS, json.dumps(list(headers)))
        self.settings.setValue(CONTENT, "true" if content else "false")
        self.settings.setValue(LIVE, "true" if live else "false")
        for name, value in headers.items():
            self.keys.save(header_account(endpoint, name), value)
        self.set_live(live)

    def target(self, content: bool | None = None) -> OtlpTarget:
        from sandbox_app.application.otel_export import OtlpTarget

        chosen = self.content if content is None else content
        return OtlpTarget(self.endpoint, headers=self.headers(), content=chosen)

    # ---- exporting --------------------------------------------------------------------------

    def export(self, plans: Sequence[SpanPlan], target: OtlpTarget) -> None:
        """Send or write on a thread of its own; its one line comes back through ``said``."""
        self.busy = True
        self.said.emit(f"OpenTelemetry: exporting to {target.where}…")

        def work() -> None:
            from sandbox_app.application.otel_export import export

            try:
                line = export(plans, target).line
            except OSError as err:
                line = f"⚠ Cannot write {target.where}: {err.strerror or err}."
            self.busy = False
            self.said.emit(line)

        threading.Thread(target=work, name="otel-export", daemon=True).start()

    # ---- live mode ------------------------------------------------------------------------

    def restore(self) -> None:
        """Live mode as it was left: at the first run (it loads the SDK), never at start-up."""
        self._restored = True
        if str(self.settings.value(LIVE, "false")).lower() == "true" and self.endpoint:
            self.set_live(True)

    def set_live(self, on: bool) -> None:
        self._restored = True  # the user's word from now on
        if self._live is not None:
            self._live.close(wait=False)  # what is queued still goes, off this thread
            self._live, self._runs = None, {}
        if on and self.endpoint:
            from sandbox_app.application.otel_live import LiveExport

            self._live = LiveExport(self.target(), self.said.emit)

    def follow(self, panes: Iterable[tuple[RunPane, str]]) -> None:
        """Follow these panes' runs (each once; the lane's name tags its spans)."""
        if not self._restored:
            self.restore()
        for pane, lane in panes:
            if id(pane) not in self._followed:
                self._followed[id(pane)] = lane
                pane.controller.engineEvents.connect(self._on_events_of(pane))
                # A removed lane's pane goes: its id may be a new pane's, to be followed too.
                pane.destroyed.connect(partial(self._forget, id(pane)))

    def _forget(self, key: int, *_: object) -> None:
        self._followed.pop(key, None)
        self._runs.pop(key, None)

    def _on_events_of(self, pane: RunPane) -> Callable[[list[Event]], None]:
        def on_events(events: list[Event]) -> None:
            if self._live is None:
                return
            record = pane.history.latest  # the pane recorded these events already
            if record is None or record.replayed:
                return
            kept = self._runs.get(id(pane))
            if kept is not None and kept[0] is record:
                kept[1].feed(events)
                return
            scenario = record.scenario.title if record.scenario is not None else ""
            from sandbox_app.core.otel.otel_attributes import Tags

            tags = Tags(scenario, record.settings.prompt_version, self._followed[id(pane)])
            run = self._live.run(record.settings, tags)
            self._runs[id(pane)] = (record, run)
            run.feed(list(record.events))  # a run followed from its first batch on

        return on_events

    def close(self) -> None:
        self.set_live(False)
