"""The workspace: the scenario being edited, the file it belongs to, and the price table.

Qt-free, so the window, tests and any future front end share one model. Panels write the
fields they own with :meth:`Workspace.update` and views subscribe to :class:`Change` notices;
nobody rebuilds the scenario by reading widgets, and no view reaches into another.
The file side (path, unsaved state, save, edits kept at close) is the
:class:`~sandbox_app.core.scenarios.document.ScenarioDocument`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.results.prices import Price
from sandbox_app.core.scenarios.document import KeptEdits, ScenarioDocument
from sandbox_app.core.scenarios.scenario import MIN_LANES, LaneConfig, Scenario
from sandbox_app.core.tools import TOOL_NAMES, Tool
from sandbox_app.core.tools.mock import AskUser


@dataclass(frozen=True)
class Change:
    """What changed: scenario field names, or everything at once when ``loaded``."""

    fields: frozenset[str]
    source: object | None = None  # who changed it: a panel need not redraw its own edit
    loaded: bool = False  # a new scenario (New, Open, restore): every view redraws

    def touches(self, *names: str) -> bool:
        return self.loaded or not self.fields.isdisjoint(names)


Listener = Callable[[Change], None]


def normalised(scenario: Scenario) -> Scenario:
    """The scenario as the window shows and edits it, so an untouched one is not "modified".

    The default template is stored as None, blank documents are dropped, a comparison has at
    least two lanes, and the temperature has the two decimals the window shows.
    """
    template = scenario.system_prompt
    lanes = scenario.lanes + tuple(LaneConfig() for _ in range(MIN_LANES - len(scenario.lanes)))
    # The order the toggles show: the built-ins', then the scenario's own and plugins as named.
    order = {name: i for i, name in enumerate(TOOL_NAMES)}
    return scenario.with_changes(
        enabled_tools=tuple(
            sorted(scenario.enabled_tools, key=lambda name: order.get(name, len(order)))
        ),
        system_prompt=None if template == DEFAULT_TEMPLATE else template,
        question=scenario.question.strip(),
        documents=tuple(d.strip() for d in scenario.documents if d.strip()),
        # The temperature box shows two decimals: 0.123 would read back as an edit to 0.12.
        model=scenario.model.replace(temperature=round(scenario.model.temperature or 0.0, 2)),
        lanes=lanes,
    )


class Workspace:
    """One scenario being edited; listeners hear of every change."""

    def __init__(self, extra_tools: Sequence[Tool] = ()) -> None:
        self.document = ScenarioDocument(normalised(Scenario()))
        self.scenario = self.document.saved
        self.prices: dict[str, Price] = {}
        self.extra_tools = list(extra_tools)  # always offered (tests' tools with side effects)
        # Side-effecting tools the user let run without asking, this session only: never
        # read from a file (core/tools/policy.py).
        self.trusted: set[str] = set()
        self.sources: list[Tool] = []  # the tools of connected MCP servers (the window's)
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _notify(self, change: Change) -> None:
        for listener in list(self._listeners):
            listener(change)

    # ---- editing ---------------------------------------------------------------------------

    def update(self, source: object | None = None, **changes: Any) -> None:
        """Set scenario fields; listeners hear only of fields whose value really changed."""
        changed = {k for k, v in changes.items() if getattr(self.scenario, k) != v}
        if changed:
            self.scenario = self.scenario.with_changes(**{k: changes[k] for k in changed})
            self._notify(Change(frozenset(changed), source))

    def set_prices(self, prices: dict[str, Price]) -> None:
        self.prices = dict(prices)
        self._notify(Change(frozenset({"prices"})))

    def tools(self, scenario: Scenario | None = None, ask: AskUser | None = None) -> list[Tool]:
        """The tools a run of ``scenario`` (default: the one being edited) may use; ``ask``
        answers the calls of its ask-me tools."""
        return (scenario or self.scenario).tools(ask, self.sources, self.extra_tools)

    def set_sources(self, tools: list[Tool]) -> None:
        """The tools connected MCP servers offer now (the tool toggles redraw)."""
        self.sources = list(tools)
        self._notify(Change(frozenset({"sources"})))

    # ---- the document --------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        return self.document.is_modified(self.scenario)

    def show(self, document: ScenarioDocument, edits: Scenario | None = None) -> None:
        """Edit ``document`` from now on, optionally with unsaved ``edits`` kept from before."""
        document.saved = normalised(document.saved)
        self.document = document
        self.scenario = document.saved if edits is None else normalised(edits)
        self._notify(Change(frozenset({"document"}), loaded=True))

    def new(self) -> None:
        self.show(ScenarioDocument(Scenario(title="Untitled")))

    def open(self, path: str | Path) -> None:
        """Raises ScenarioError with one line; nothing changes then."""
        self.show(ScenarioDocument.open(path))

    def save(self, path: Path | None = None) -> None:
        """Save to ``path`` or the document's own file; raises OSError, changing nothing."""
        self.document.save(self.scenario, path)
        self._notify(Change(frozenset({"document"})))

    def keep(self) -> KeptEdits | None:
        return self.document.keep(self.scenario)
