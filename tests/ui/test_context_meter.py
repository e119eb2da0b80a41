"""The comparison with the context meter and every kind's figures: a lane's step header says its
prompt against the context window, a server that cut the prompt is named in the trace and
counted in the table, and a lane's header names its backend's kind. Each kind's thinking and
cache figures fill its row, a dash where a kind does not report them."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind
from sandbox_app.backends.catalogue.request_fields import OFFLINE
from sandbox_app.backends.registry import register_kind, unregister_kind
from sandbox_app.core.results.compare import COLUMNS
from sandbox_app.core.results.exports import to_csv
from sandbox_app.core.results.presentation import Role
from sandbox_app.core.running.backend import Backend, Delta, Message, StreamParams, Usage
from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings, Scenario
from sandbox_app.ui.lane.lane_widget import LaneWidget
from sandbox_app.ui.window.main_window import MainWindow
from tests.echo_kind import ECHO
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer


class CachingBackend:
    """A provider's own API as a kind: it thinks and reads the prompt from its cache."""

    label = "Cachy"

    async def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        yield Delta(reasoning="The sum is easy.")
        yield Delta(text="Answer: 4", finish_reason="stop")
        yield Delta(usage=Usage(900, 30, reasoning_tokens=20, cache_read_tokens=512))

    async def list_models(self) -> list[str]:
        return ["c1"]

    async def aclose(self) -> None:
        return None


def _make(_config: BackendConfig, _scenario: Scenario, _key: str, _version: str) -> Backend:
    return CachingBackend()


CACHY = BackendKind("cachy", "Cachy (native)", _make, fields=frozenset({"model"}), request=OFFLINE)


@pytest.fixture
def kinds_window(make_window: Callable[..., MainWindow]) -> Iterator[MainWindow]:
    for kind in (CACHY, ECHO):  # before the window: its panels list the kinds when made
        register_kind(kind)
    try:
        yield make_window()
    finally:
        for kind in (CACHY, ECHO):
            unregister_kind(kind.id)


def block_role(lane: LaneWidget, text: str) -> Role | None:
    block = lane.trace.document().firstBlock()
    while block.isValid():
        if block.text() == text:
            return lane.trace.role_of(block.blockNumber())
        block = block.next()
    return None


def test_lanes_of_three_kinds_show_their_kind_context_and_figures(
    qtbot: QtBot, kinds_window: MainWindow, fake_server: ModelServer
) -> None:
    # A local server with a 60-token context that cuts silently, as Ollama does.
    fake_server.set_model("m", ModelScript(replies=replies_of("brightgrid"), context_length=60))
    small = LaneSettings(context_window=60, max_tokens=40)
    compare = kinds_window.compare
    compare.set_lanes(
        (
            LaneConfig("cachy", model="c1"),
            LaneConfig("custom", fake_server.base_url, "m", settings=small),
            LaneConfig("echo", model="e"),
        )
    )
    kinds_window.tabs.setCurrentWidget(compare)
    cachy, local, echo = compare.lanes
    # Each lane's header says which kind of backend it runs on.
    assert cachy.model_label.text().startswith("Cachy (native) · c1")
    assert local.model_label.text().startswith("Custom URL (OpenAI-compatible server) · m")
    assert echo.model_label.text().startswith("Echo · e")
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)

    # The step header reads the server's count against the window; the cut is named.
    header = "── Step 1 · prompt 60 / 60 tokens (100%) ──"
    qtbot.waitUntil(lambda: block_role(local, header) is Role.STEP, timeout=5000)
    cut = "the server cut the prompt to 60 tokens: the model did not see the system prompt"
    assert cut in local.trace.plain_text()
    assert local.trace.scroll_to_step(2)  # a header the meter rewrote still heads its step
    assert block_role(cachy, "── Step 1 · prompt 900 tokens ──") is Role.STEP  # no window

    rows = {row["Model"]: row for row in compare.rows()}
    assert rows["m"]["Prompt cut"] == "3"
    assert rows["m"]["Peak context"] == "100% of 60"
    assert rows["c1"]["Prompt cut"] == "0"
    assert rows["c1"]["Peak context"] == "900 tokens"
    assert (rows["c1"]["Cache read"], rows["c1"]["Thinking tokens"]) == ("512", "20")
    assert rows["c1"]["Thinking time"].endswith(" s")
    # A kind that reports none of it: dashes, never a made-up 0.
    for column in ("Cache read", "Prompt cut", "Thinking tokens", "Thinking time", "Cost"):
        assert rows["e"][column] == "—", column
    assert rows["m"]["Cache read"] == "—"  # the server said nothing of a cache

    # The table on screen and its export carry the same columns.
    table = compare.table
    labels = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert {"Peak context", "Prompt cut", "Cache read"} <= set(labels)
    at = labels.index("Prompt cut")
    assert [table.item(r, at).text() for r in range(table.rowCount())] == ["0", "3", "—"]
    exported = list(csv.DictReader(io.StringIO(to_csv(compare.rows()))))
    assert [r["Prompt cut"] for r in exported] == ["0", "3", "—"]
    assert list(exported[0]) == list(COLUMNS)
